// The run list: filter by status, workflow and time (and, for admins, by owner); newest first,
// with durations and who started each; refreshes itself while any listed run is active.
import { useEffect, useState } from 'react'
import { http, query } from '../api/client'
import type { components } from '../api/schema'
import type { RunStatus } from '../api/types'
import { ErrorBox } from '../components/ErrorBox'
import { StatusBadge } from '../components/StatusBadge'
import { apiSaid, elapsedMs, formatDuration, formatTime } from '../lib/format'
import { useNow } from '../lib/useNow'
import { href } from '../lib/router'
import { useApi } from '../lib/useApi'
import { type Me, ownerText, useSession } from '../lib/session'

const STATUSES = ['pending', 'running', 'waiting_input', 'succeeded', 'failed', 'cancelled']
const PAGE = 50

type KeyList = components['schemas']['KeyList']

/** The owners an admin can filter by: the admin, every key's principal, the owners listed. */
function ownerChoices(me: Me | null, keys: KeyList | null, listed: (string | null | undefined)[], current: string) {
  const names = new Map<string, string>([['admin', 'admin (API_TOKEN)']])
  if (me) names.set(me.id, `${me.id} (you)`)
  for (const k of keys?.keys ?? []) if (!names.has(k.principal)) names.set(k.principal, `${k.name} (${k.principal}${k.state === 'active' ? '' : `, ${k.state}`})`)
  for (const owner of [...listed, current]) if (owner && !names.has(owner)) names.set(owner, owner)
  return [...names.entries()]
}

function toIso(local: string): string | undefined {
  if (!local) return undefined
  const d = new Date(local)
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString()
}

export function RunsPage({ initialWorkflow }: { initialWorkflow: string }) {
  const [status, setStatus] = useState('')
  const [workflowId, setWorkflowId] = useState(initialWorkflow)
  const [since, setSince] = useState('')
  const [until, setUntil] = useState('')
  const [owner, setOwner] = useState('')
  const [offset, setOffset] = useState(0)
  const { me } = useSession()
  const admin = Boolean(me?.access_control && me.scopes.includes('admin'))
  useEffect(() => setWorkflowId(initialWorkflow), [initialWorkflow])
  const path = `/runs${query({ status, workflow_id: workflowId, owner: admin ? owner : '', since: toIso(since), until: toIso(until), limit: PAGE, offset })}`
  const runs = useApi(
    () =>
      http.get('/runs', {
        params: { query: { status: (status || undefined) as RunStatus | undefined, workflow_id: workflowId || undefined, owner: (admin && owner) || undefined, since: toIso(since), until: toIso(until), limit: PAGE, offset } },
      }),
    [path],
    `GET ${path}`,
  )
  const now = useNow(Boolean(runs.data?.runs.some((r) => r.duration_ms === null)))
  const workflows = useApi(() => http.get('/workflows'), [], 'GET /workflows')
  const keys = useApi(() => (admin ? http.get('/keys') : Promise.resolve(null)), [admin], 'GET /keys')
  const showOwner = (runs.data?.runs ?? []).some((r) => r.owner)
  const active = (runs.data?.runs ?? []).some((r) => ['pending', 'running', 'waiting_input'].includes(r.status))
  useEffect(() => {
    if (!active) return
    const t = setInterval(runs.reload, 3000)
    return () => clearInterval(t)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [active, path])

  const reset = (fn: () => void) => {
    fn()
    setOffset(0)
  }
  return (
    <div className="page">
      <div className="row spread">
        <h1>Runs</h1>
        <button type="button" onClick={runs.reload}>Refresh</button>
      </div>
      <div className="filters row" data-testid="run-filters">
        <label>
          status{' '}
          <select aria-label="Status filter" value={status} onChange={(e) => reset(() => setStatus(e.target.value))}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>{s.replace('_', ' ')}</option>
            ))}
          </select>
        </label>
        <label>
          workflow{' '}
          <select aria-label="Workflow filter" value={workflowId} onChange={(e) => reset(() => setWorkflowId(e.target.value))}>
            <option value="">any</option>
            {(workflows.data?.workflows ?? []).map((w) => (
              <option key={w.id} value={w.id}>{w.id}</option>
            ))}
            {workflowId && !(workflows.data?.workflows ?? []).some((w) => w.id === workflowId) && <option value={workflowId}>{workflowId}</option>}
          </select>
        </label>
        {admin && (
          <label>
            owner{' '}
            <select aria-label="Owner filter" value={owner} onChange={(e) => reset(() => setOwner(e.target.value))}>
              <option value="">anyone</option>
              {ownerChoices(me, keys.data, (runs.data?.runs ?? []).map((r) => r.owner), owner).map(([id, label]) => (
                <option key={id} value={id}>{label}</option>
              ))}
            </select>
          </label>
        )}
        <label>
          since <input type="datetime-local" aria-label="Since" value={since} onChange={(e) => reset(() => setSince(e.target.value))} />
        </label>
        <label>
          until <input type="datetime-local" aria-label="Until" value={until} onChange={(e) => reset(() => setUntil(e.target.value))} />
        </label>
      </div>
      <ErrorBox error={runs.error} title="Could not list the runs" />
      {runs.data && (
        <>
          <table className="list-table" data-testid="run-list">
            <thead>
              <tr>
                <th>run</th>
                <th>workflow</th>
                <th>status</th>
                {showOwner && <th>owner</th>}
                <th>created</th>
                <th>duration</th>
                <th>error</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.runs.map((r) => (
                <tr key={r.run_id} data-run={r.run_id}>
                  <td data-label="run"><a href={href('runs', r.run_id)}><code>{r.run_id.slice(0, 8)}</code></a></td>
                  <td data-label="workflow"><a href={href('workflows', r.workflow_id)}>{r.workflow_id}</a></td>
                  <td data-label="status"><StatusBadge status={r.status} /></td>
                  {showOwner && <td data-label="owner" data-testid="run-owner">{r.owner ? ownerText(r.owner, me) : ''}</td>}
                  <td data-label="created" className="muted">{formatTime(r.created_at)}</td>
                  <td data-label="duration">{r.duration_ms !== null ? formatDuration(r.duration_ms) : <span className="muted">{formatDuration(elapsedMs(r.started_at ?? r.created_at, null, now))} so far</span>}</td>
                  <td data-label="error" className="run-list-error" data-testid="run-error" title={r.error?.message ?? undefined}>
                    {r.error && (
                      <>
                        {r.error.node_id && <code>{r.error.node_id}</code>} {apiSaid(r.error.status_code, r.error.api_message) ?? r.error.message}
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {runs.data.runs.length === 0 && <p className="muted">No runs match. Start one from a workflow.</p>}
          <div className="row">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Newer</button>
            <span className="muted">
              {runs.data.total === 0 ? 0 : offset + 1}–{offset + runs.data.runs.length} of {runs.data.total}
            </span>
            <button type="button" disabled={offset + PAGE >= runs.data.total} onClick={() => setOffset(offset + PAGE)}>Older</button>
          </div>
        </>
      )}
    </div>
  )
}
