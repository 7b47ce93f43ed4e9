// The workflow list: every workflow with its file, format, params and validity; the files that
// did not load; links to open the editor or start a run.
import { http } from '../api/client'
import { ScopedButton } from '../components/Access'
import { ErrorBox } from '../components/ErrorBox'
import { href } from '../lib/router'
import { useApi } from '../lib/useApi'
import { useCan } from '../lib/session'
import { triggersSummary } from '../lib/triggers'

/** A link to a workflow's schedules and webhooks, saying how many it has; nothing without. */
function TriggerBadge({ workflowId, schedules, webhooks }: { workflowId: string; schedules: string[]; webhooks: string[] }) {
  const text = triggersSummary(schedules, webhooks)
  if (!text) return null
  const names = [schedules.length ? `schedules: ${schedules.join(', ')}` : '', webhooks.length ? `webhooks: ${webhooks.join(', ')}` : '']
  return (
    <a className="trigger-badge small" href={href('workflows', workflowId, 'triggers')} title={names.filter(Boolean).join('; ')} data-testid="trigger-badge">
      {text}
    </a>
  )
}

export function WorkflowsPage() {
  const list = useApi(() => http.get('/workflows'), [], 'GET /workflows')
  const mayAuthor = useCan('author')
  return (
    <div className="page">
      <div className="row spread">
        <h1>Workflows</h1>
        <div className="row">
          <button type="button" onClick={list.reload}>Refresh</button>
          {mayAuthor.allowed ? (
            <a className="button primary" href={href('workflows', '_new')}>New document</a>
          ) : (
            <ScopedButton scope="author" type="button" className="primary">New document</ScopedButton>
          )}
        </div>
      </div>
      <ErrorBox error={list.error} title="Could not load the workflows" />
      {list.data && list.data.problems.length > 0 && (
        <div className="error-box" data-testid="workflow-problems">
          <div className="error-title">Workflow files that did not load</div>
          <ul className="violations">
            {list.data.problems.map((p, i) => (
              <li key={i}>
                <code>{p.file}</code>
                {p.line ? ` line ${p.line}` : ''}: {p.message}
                {(p.violations ?? []).map((v, j) => (
                  <div key={j} className="small">{v.line ? `line ${v.line}, ` : ''}{v.path}: {v.message}</div>
                ))}
              </li>
            ))}
          </ul>
        </div>
      )}
      {list.data && (
        <table className="list-table" data-testid="workflow-list">
          <thead>
            <tr>
              <th>workflow</th>
              <th>description</th>
              <th>file</th>
              <th>params</th>
              <th>valid</th>
              <th><span className="sr-only">actions</span></th>
            </tr>
          </thead>
          <tbody>
            {list.data.workflows.map((w) => (
              <tr key={w.id}>
                <td data-label="workflow">
                  <span className="workflow-cell">
                    <a href={href('workflows', w.id)}><code>{w.id}</code></a>
                    <TriggerBadge workflowId={w.id} schedules={w.schedules} webhooks={w.webhooks} />
                  </span>
                </td>
                <td data-label="description">{w.description ?? w.title ?? ''}</td>
                <td data-label="file" className="muted">{w.file}</td>
                <td data-label="params" className="muted">{Object.keys(w.params).join(', ')}</td>
                <td data-label="valid">{w.valid ? '✓' : <span className="field-error">{w.errors} error(s)</span>}</td>
                <td data-label="actions" className="actions">
                  <a href={href('workflows', w.id)}>edit</a> · <a href={`${href('workflows', w.id)}?run=1`}>run</a> ·{' '}
                  <a href={`${href('runs')}?workflow_id=${encodeURIComponent(w.id)}`}>runs</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && list.data.workflows.length === 0 && <p className="muted">No workflows yet: create a document.</p>}
    </div>
  )
}
