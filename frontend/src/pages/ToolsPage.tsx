// The registered tools: search; each card with its endpoint, auth (and a warning when its
// secret is not set), parameters, hints and annotations; create, edit and delete tools with a
// form made from the tool config's schema (the server validates), parameters and output schema
// as rows or JSON; Edit brings the form into view with its first field focused; a violation
// the server named goes once its field is edited (and the banner with the last one); reload
// hand-edited files.
import { useEffect, useRef, useState } from 'react'
import { http, type ApiError, type Operation, type RequestBody, toApiError, type Violation } from '../api/client'
import type { ToolAuth, ToolSummary } from '../api/types'
import { BlockedNote, ScopedButton } from '../components/Access'
import { ErrorBox } from '../components/ErrorBox'
import { useCan } from '../lib/session'
import { SchemaForm } from '../components/SchemaForm'
import { SecretStatus } from '../components/SecretStatus'
import { TOOL_FIELDS } from '../components/ToolFields'
import { ToolParameters } from '../components/ToolParameters'
import type { Schema } from '../lib/schemaForm'
import { clearViolations, withRemaining } from '../lib/toolForm'
import { useApi } from '../lib/useApi'

/** A tool config as the form edits it (the body POST and PUT /tools take). */
type ToolBody = RequestBody<Operation<'/tools', 'post'>>

const DERIVED = ['endpoint', 'input_schema', 'effective_annotations', 'auth_status']
const NEW_TOOL = { api: { method: 'GET', path: '/' } }

function AuthLine({ auth }: { auth: ToolAuth }) {
  if (auth.type === 'none') return <div className="auth-line muted" data-testid="tool-auth">auth: none</div>
  const where = auth.type === 'api_key' ? ` in ${auth.in} ${auth.name}` : auth.type === 'basic' ? ` as ${auth.username}` : ''
  return (
    <div className="auth-line" data-testid="tool-auth">
      auth: {auth.type}
      {where} ·{' '}
      {auth.secret && <SecretStatus state={{ secret: auth.secret, set: Boolean(auth.set), set_with: auth.set_with ?? '' }} />}
    </div>
  )
}

function ToolCard({ tool, onEdit, onDelete }: { tool: ToolSummary; onEdit: () => void; onDelete: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false)
  const hints = tool.hints
  const flags = Object.entries(tool.annotations)
    .filter(([, v]) => v)
    .map(([k]) => k.replace('_', '-'))
  return (
    <article className="card tool-card" data-testid={`tool-${tool.name}`}>
      <header className="row spread">
        <h2>{tool.name}</h2>
        <span className="muted">{flags.join(' · ')}</span>
      </header>
      <div className="http-line">
        <span className="method">{tool.method}</span> <code>{tool.endpoint}</code>
      </div>
      <AuthLine auth={tool.auth} />
      <p>{tool.description}</p>
      <ToolParameters tool={tool} />
      {(hints.hint || hints.category || hints.requires?.length || hints.next?.length || hints.outputs?.length) && (
        <dl className="hints">
          {hints.category && (<><dt>category</dt><dd>{hints.category}</dd></>)}
          {hints.requires?.length ? (<><dt>requires</dt><dd>{hints.requires.join(', ')}</dd></>) : null}
          {hints.next?.length ? (<><dt>next</dt><dd>{hints.next.join(', ')}</dd></>) : null}
          {hints.outputs?.length ? (<><dt>outputs</dt><dd>{hints.outputs.join(', ')}</dd></>) : null}
          {hints.hint && (<><dt>hint</dt><dd>{hints.hint}</dd></>)}
        </dl>
      )}
      <div className="row">
        <ScopedButton scope="author" type="button" onClick={onEdit}>Edit</ScopedButton>
        {confirming ? (
          <>
            <ScopedButton scope="admin" type="button" className="danger" onClick={() => void onDelete()}>Delete {tool.name} for good</ScopedButton>
            <button type="button" onClick={() => setConfirming(false)}>Keep it</button>
          </>
        ) : (
          <ScopedButton scope="admin" type="button" className="danger" onClick={() => setConfirming(true)}>Delete</ScopedButton>
        )}
      </div>
    </article>
  )
}

type Editing = { mode: 'new' } | { mode: 'edit'; name: string; initial: Record<string, unknown> }

export function ToolsPage() {
  const [q, setQ] = useState('')
  const list = useApi(() => http.get('/tools'), [], 'GET /tools')
  const schema = useApi(() => http.get('/tools/_schema').then((schema) => schema as Schema), [], 'GET /tools/_schema')
  const [editing, setEditing] = useState<Editing | null>(null)
  const [error, setError] = useState<ApiError | null>(null)
  /** The violations of the last save not yet edited away. */
  const [violations, setViolations] = useState<Violation[]>([])
  const editor = useRef<HTMLDivElement>(null)
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<string | null>(null)
  const mayAuthor = useCan('author')
  const mayDelete = useCan('admin')
  const needle = q.trim().toLowerCase()
  const tools = (list.data?.tools ?? []).filter(
    (t) =>
      !needle ||
      t.name.toLowerCase().includes(needle) ||
      t.description.toLowerCase().includes(needle) ||
      Object.keys(t.parameters).some((p) => p.toLowerCase().includes(needle)) ||
      (t.hints.category ?? '').toLowerCase().includes(needle),
  )
  const missing = (list.data?.tools ?? []).filter((t) => t.auth.secret && !t.auth.set)

  const fail = (e: ApiError | null) => {
    setError(e)
    setViolations(e?.violations ?? [])
  }
  const call = async <T,>(where: string, request: () => Promise<T>, done: (r: T) => void) => {
    setBusy(true)
    fail(null)
    setMessage(null)
    try {
      done(await request())
      list.reload()
    } catch (exc) {
      fail(toApiError(exc, where))
    } finally {
      setBusy(false)
    }
  }
  const edit = async (name: string) => {
    fail(null)
    try {
      const view = await http.get('/tools/{name}', { params: { path: { name } } })
      setEditing({ mode: 'edit', name, initial: Object.fromEntries(Object.entries(view).filter(([k]) => !DERIVED.includes(k))) })
    } catch (exc) {
      fail(toApiError(exc, `GET /tools/${name}`))
    }
  }
  // A form opened (by Edit on any card, or New tool): into view, its first field focused.
  useEffect(() => {
    const box = editor.current
    if (!editing || !box) return
    box.scrollIntoView({ block: 'start' })
    box.querySelector<HTMLElement>('input, select, textarea')?.focus({ preventScroll: true })
  }, [editing, schema.data])
  const shown = withRemaining(error, violations)
  const save = (value: Record<string, unknown>) => {
    if (!editing) return
    if (editing.mode === 'new') void call('POST /tools', () => http.post('/tools', { body: value as ToolBody }), () => { setEditing(null); setMessage(`Created ${String(value.name)}.`) })
    else void call(`PUT /tools/${editing.name}`, () => http.put('/tools/{name}', { params: { path: { name: editing.name } }, body: value as ToolBody }), () => { setEditing(null); setMessage(`Saved ${editing.name}.`) })
  }
  const reload = () =>
    void call('POST /tools/_reload', () => http.post('/tools/_reload'), (r) =>
      setMessage(`Reloaded the tool files: ${r.tools.length} tools, ${r.problems.length} problem(s).`),
    )

  return (
    <div className="page">
      <div className="row spread">
        <h1>Tools</h1>
        <div className="row">
          <ScopedButton scope="author" type="button" className="primary" onClick={() => setEditing({ mode: 'new' })} disabled={!schema.data}>New tool</ScopedButton>
          <ScopedButton scope="author" type="button" onClick={reload} disabled={busy} title="Read the tool files again after editing them by hand">Reload files</ScopedButton>
          <button type="button" onClick={list.reload}>Refresh</button>
        </div>
      </div>
      <BlockedNote permit={mayAuthor} what="Creating, editing and reloading tools" />
      {mayAuthor.allowed && <BlockedNote permit={mayDelete} what="Deleting tools" />}
      {message && <div className="ok-text" data-testid="tools-message">{message}</div>}
      <ErrorBox error={schema.error} title="Could not load the tool schema" />
      {missing.length > 0 && (
        <div className="notice" data-testid="secrets-missing">
          {missing.length} tool(s) need a secret that is not set: {missing.map((t) => t.name).join(', ')}.
        </div>
      )}
      {editing && schema.data && (
        <div className="card tool-editor" data-testid="tool-editor" ref={editor}>
          <h2>{editing.mode === 'new' ? 'New tool' : `Edit ${editing.name}`}</h2>
          <SchemaForm
            key={editing.mode === 'new' ? '_new' : editing.name}
            schema={schema.data}
            initial={editing.mode === 'new' ? NEW_TOOL : editing.initial}
            submitLabel={editing.mode === 'new' ? 'Create tool' : 'Save tool'}
            busy={busy}
            violations={violations}
            onEdit={(path) => setViolations((v) => clearViolations(v, path))}
            custom={TOOL_FIELDS}
            onSubmit={save}
            onCancel={() => { setEditing(null); fail(null) }}
            testId="tool-form"
            open={['api', 'auth']}
          />
        </div>
      )}
      <ErrorBox error={shown} title={editing ? (shown && shown.violations.length ? `Not saved (${shown.violations.length} to fix)` : 'Not saved') : undefined} />
      <input type="search" className="wide" placeholder="Search by name, description, parameter or category" aria-label="Search tools" value={q} onChange={(e) => setQ(e.target.value)} />
      <ErrorBox error={list.error} title="Could not load the tools" />
      {list.data && list.data.problems.length > 0 && (
        <div className="error-box" data-testid="tool-problems">
          <div className="error-title">Tool files that did not load</div>
          <ul className="violations">
            {list.data.problems.map((p, i) => (
              <li key={i}>
                <code>{p.file}</code>
                {p.tool ? ` (tool ${String(p.tool)})` : ''}
                {p.field ? `, field ${String(p.field)}` : ''} — {p.reason}
              </li>
            ))}
          </ul>
        </div>
      )}
      {list.data && <div className="muted">{tools.length} of {list.data.tools.length} tools</div>}
      <div className="tool-grid">
        {tools.map((t) => (
          <ToolCard
            key={t.name}
            tool={t}
            onEdit={() => void edit(t.name)}
            onDelete={() => call(`DELETE /tools/${t.name}`, () => http.delete('/tools/{name}', { params: { path: { name: t.name } } }), () => setMessage(`Deleted ${t.name}.`))}
          />
        ))}
      </div>
    </div>
  )
}
