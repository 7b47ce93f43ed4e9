// The shell: navigation, who is signed in, and the page for the current hash route — or the
// sign-in form when the server needs a credential and there is none (or it was refused).
import { lazy, Suspense, useEffect, useRef, useState } from 'react'
import { SignIn, WhoAmI } from './components/Access'
import { ThemeToggle } from './components/ThemeToggle'
import { lazyPageFor } from './lib/preload'
import { useRoute } from './lib/router'
import { SessionProvider, useSession } from './lib/session'
import { RunsPage } from './pages/RunsPage'
import { SingleShotPage } from './pages/SingleShotPage'
import { ToolsPage } from './pages/ToolsPage'
import { TriggersPage } from './pages/TriggersPage'
import { WorkflowsPage } from './pages/WorkflowsPage'

// The editor (CodeMirror) and graphs (React Flow) load on first use.
const loadEditorPage = () => import('./pages/WorkflowEditorPage')
const loadRunPage = () => import('./pages/RunPage')
const loadCatalogsPage = () => import('./pages/CatalogsPage')
const WorkflowEditorPage = lazy(() => loadEditorPage().then((m) => ({ default: m.WorkflowEditorPage })))
const RunPage = lazy(() => loadRunPage().then((m) => ({ default: m.RunPage })))
const CatalogsPage = lazy(() => loadCatalogsPage().then((m) => ({ default: m.CatalogsPage })))

const LOADERS = { run: loadRunPage, editor: loadEditorPage, catalogs: loadCatalogsPage }

const NAV = [
  { key: 'single', label: 'Single-shot' },
  { key: 'tools', label: 'Tools' },
  { key: 'catalogs', label: 'Catalogs' },
  { key: 'workflows', label: 'Workflows' },
  { key: 'runs', label: 'Runs' },
]

function Page() {
  const { path, query } = useRoute()
  const [section = 'single', id, part] = path
  switch (section) {
    case 'single':
      return <SingleShotPage />
    case 'tools':
      return <ToolsPage />
    case 'catalogs':
      return <CatalogsPage />
    case 'workflows':
      if (id && part === 'triggers') return <TriggersPage key={id} workflowId={id} />
      return id ? <WorkflowEditorPage key={id} workflowId={id} showRun={query.get('run') === '1'} /> : <WorkflowsPage />
    case 'runs':
      return id ? <RunPage key={id} runId={id} /> : <RunsPage />
    default:
      return (
        <div className="page">
          <h1>Not found</h1>
          <p>
            There is no page <code>#/{path.join('/')}</code>. <a href="#/single">Go to the single-shot form</a>.
          </p>
        </div>
      )
  }
}

/**
 * The page, or the sign-in form. A session the server ends (a revoked or expired key) keeps the
 * page mounted but hidden, so signing in again as the same principal returns to it with unsaved
 * edits intact; another principal gets fresh pages, and signing out drops them.
 */
function Content() {
  const session = useSession()
  const [shownFor, setShownFor] = useState<string | null>(null)
  const ready = session.phase === 'open' || session.phase === 'signed-in' || session.phase === 'unknown'
  const principal = session.me?.id ?? '(unknown)'
  useEffect(() => {
    if (ready) setShownFor(principal)
  }, [ready, principal])
  if (session.phase === 'checking') return <div className="page muted">loading…</div>
  const keep = ready ? principal : session.ended ? shownFor : null
  return (
    <>
      {!ready && <SignIn />}
      {keep !== null && (
        <div hidden={!ready}>
          <Suspense fallback={<div className="page muted">loading…</div>}>
            <Page key={keep} />
          </Suspense>
        </div>
      )}
    </>
  )
}

export function App() {
  // A deep link's lazy page starts loading once GET /me is sent (the session's effect runs
  // before this one), so the two overlap rather than follow each other (docs/performance.md,
  // the UI's cold loads); a failure is left to the page.
  useEffect(() => {
    const first = lazyPageFor(window.location.hash)
    if (first) void LOADERS[first]().catch(() => null)
  }, [])
  return (
    <SessionProvider>
      <Shell />
    </SessionProvider>
  )
}

function Shell() {
  const { path } = useRoute()
  const current = path[0] ?? 'single'
  const [menuOpen, setMenuOpen] = useState(false)
  const where = path.join('/')
  const menuButton = useRef<HTMLButtonElement>(null)
  useEffect(() => setMenuOpen(false), [where]) // a page was chosen: the menu closes
  useEffect(() => {
    if (!menuOpen) return
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return
      setMenuOpen(false)
      menuButton.current?.focus()
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [menuOpen])
  return (
    <div className="app">
      {/* the first tab stop: past the navigation to the page (a hash link would change the route) */}
      <a
        className="skip-link"
        href="#main-content"
        onClick={(e) => {
          e.preventDefault()
          document.getElementById('main-content')?.focus()
        }}
      >
        Skip to content
      </a>
      <header className={`topbar${menuOpen ? ' menu-open' : ''}`}>
        <a className="brand" href="#/single">Dynamic Tools</a>
        <button ref={menuButton} type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-menu" onClick={() => setMenuOpen(!menuOpen)}>
          <span aria-hidden="true">☰</span> Menu
        </button>
        <div className="menu" id="main-menu">
          <nav>
            {NAV.map((n) => (
              <a key={n.key} href={`#/${n.key}`} className={current === n.key ? 'active' : ''}>
                {n.label}
              </a>
            ))}
          </nav>
          <div className="topbar-right">
            <a href="/docs" target="_blank" rel="noreferrer">API docs</a>
            <ThemeToggle />
            <WhoAmI />
          </div>
        </div>
      </header>
      <main id="main-content" tabIndex={-1}>
        <Content />
      </main>
    </div>
  )
}
