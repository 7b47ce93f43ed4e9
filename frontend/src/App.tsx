// The shell: navigation, the API token, and the page for the current hash route.
import { lazy, Suspense, useEffect, useState } from 'react'
import { TokenField } from './components/TokenField'
import { useRoute } from './lib/router'
import { RunsPage } from './pages/RunsPage'
import { SingleShotPage } from './pages/SingleShotPage'
import { ToolsPage } from './pages/ToolsPage'
import { WorkflowsPage } from './pages/WorkflowsPage'

// The editor (CodeMirror) and graphs (React Flow) load on first use.
const WorkflowEditorPage = lazy(() => import('./pages/WorkflowEditorPage').then((m) => ({ default: m.WorkflowEditorPage })))
const RunPage = lazy(() => import('./pages/RunPage').then((m) => ({ default: m.RunPage })))
const CatalogsPage = lazy(() => import('./pages/CatalogsPage').then((m) => ({ default: m.CatalogsPage })))

const NAV = [
  { key: 'single', label: 'Single-shot' },
  { key: 'tools', label: 'Tools' },
  { key: 'catalogs', label: 'Catalogs' },
  { key: 'workflows', label: 'Workflows' },
  { key: 'runs', label: 'Runs' },
]

function Page() {
  const { path, query } = useRoute()
  const [section = 'single', id] = path
  switch (section) {
    case 'single':
      return <SingleShotPage />
    case 'tools':
      return <ToolsPage />
    case 'catalogs':
      return <CatalogsPage />
    case 'workflows':
      return id ? <WorkflowEditorPage key={id} workflowId={id} showRun={query.get('run') === '1'} /> : <WorkflowsPage />
    case 'runs':
      return id ? <RunPage key={id} runId={id} /> : <RunsPage initialWorkflow={query.get('workflow_id') ?? ''} />
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

export function App() {
  const { path } = useRoute()
  const current = path[0] ?? 'single'
  const [menuOpen, setMenuOpen] = useState(false)
  const where = path.join('/')
  useEffect(() => setMenuOpen(false), [where]) // a page was chosen: the menu closes
  return (
    <div className="app">
      <header className={`topbar${menuOpen ? ' menu-open' : ''}`}>
        <a className="brand" href="#/single">Dynamic Tools</a>
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-menu" onClick={() => setMenuOpen(!menuOpen)}>
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
            <TokenField />
          </div>
        </div>
      </header>
      <main>
        <Suspense fallback={<div className="page muted">loading…</div>}>
          <Page />
        </Suspense>
      </main>
    </div>
  )
}
