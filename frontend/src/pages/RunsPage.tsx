// The run list and its search (docs/run-search.md): a filter bar kept in the URL (reload, back
// and forward keep it), counts by status over time as a small chart, cursor pages, and bulk
// cancel/redrive of the selected runs or of every run that matches, after a confirmation that
// names how many runs. Refreshes itself while any listed run is active.
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { type ApiError, http, toApiError } from '../api/client'
import type { components } from '../api/schema'
import { ErrorBox } from '../components/ErrorBox'
import { STATUS_COLORS, StatusBadge } from '../components/StatusBadge'
import { apiSaid, elapsedMs, formatDuration, formatTime } from '../lib/format'
import { useNow } from '../lib/useNow'
import { href, navigate, useRoute } from '../lib/router'
import { useApi } from '../lib/useApi'
import { type Me, ownerText, useSession } from '../lib/session'

const STATUSES = ['pending', 'running', 'waiting_input', 'succeeded', 'failed', 'cancelled']
const PAGE = 50
/** The URL's filter keys (besides params.<name> and output.<name>), as GET /runs takes them. */
const KEYS = ['workflow_id', 'status', 'owner', 'trigger', 'trigger_name', 'since', 'until', 'error', 'sort']

type KeyList = components['schemas']['KeyList']
type RunList = components['schemas']['RunList']
type RunStats = components['schemas']['RunStats']
type BulkReport = components['schemas']['BulkReport']
type Filters = Record<string, string>

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

function toLocal(iso: string | undefined): string {
  if (!iso) return ''
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** The filters the URL holds (the hash's query): every known key and each params./output. key. */
export function filtersOf(query: URLSearchParams): Filters {
  const out: Filters = {}
  for (const [key, value] of query.entries()) {
    if (!value) continue
    if (KEYS.includes(key) || key.startsWith('params.') || key.startsWith('output.')) out[key] = value
  }
  return out
}

/** `passenger=Ada`, `params.passenger=Ada` or `output.booking=B1` as a query key and value. */
export function valueFilter(text: string): [string, string] | null {
  const at = text.indexOf('=')
  if (at <= 0) return null
  const name = text.slice(0, at).trim()
  const value = text.slice(at + 1).trim()
  if (!name || !value) return null
  return [name.startsWith('params.') || name.startsWith('output.') ? name : `params.${name}`, value]
}

function valueText(filters: Filters): string {
  const key = Object.keys(filters).find((k) => k.startsWith('params.') || k.startsWith('output.'))
  return key ? `${key}=${filters[key]}` : ''
}

function withoutValues(filters: Filters): Filters {
  return Object.fromEntries(Object.entries(filters).filter(([k]) => !k.startsWith('params.') && !k.startsWith('output.')))
}

function search(filters: Filters): string {
  const params = new URLSearchParams(Object.entries(filters).filter(([, v]) => v))
  const text = params.toString()
  return text ? `?${text}` : ''
}

function triggerText(trigger: components['schemas']['RunTriggerView'] | null | undefined): string {
  return trigger ? `${trigger.kind} ${trigger.name}` : 'manual'
}

/** Counts by status over time: one stacked bar per bucket (plain SVG). */
export function RunChart({ stats }: { stats: RunStats }) {
  const width = 600
  const height = 90
  const buckets = stats.buckets
  const most = Math.max(1, ...buckets.map((b) => b.total))
  const bar = width / Math.max(1, buckets.length)
  const said = STATUSES.filter((s) => (stats.by_status[s] ?? 0) > 0).map((s) => `${stats.by_status[s]} ${s.replace('_', ' ')}`)
  const label = `Runs created from ${formatTime(stats.since)} to ${formatTime(stats.until)}: ${stats.total}${said.length ? ` (${said.join(', ')})` : ''}`
  return (
    <figure className="run-chart" data-testid="run-chart">
      <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" aria-label={label} width="100%" height={height}>
        {buckets.map((b, i) => {
          let y = height
          return (
            <g key={b.start}>
              <title>{`${formatTime(b.start)}: ${b.total}`}</title>
              {STATUSES.filter((s) => b.counts[s]).map((s) => {
                const h = (b.counts[s] / most) * (height - 4)
                y -= h
                return <rect key={s} x={i * bar + 0.5} y={y} width={Math.max(1, bar - 1)} height={h} style={{ fill: STATUS_COLORS[s] }} data-status={s} />
              })}
            </g>
          )
        })}
      </svg>
      <figcaption className="row muted">
        <span data-testid="run-chart-total">{stats.total} runs</span>
        {STATUSES.filter((s) => (stats.by_status[s] ?? 0) > 0).map((s) => (
          <span key={s} className="chart-key">
            <span className="chart-swatch" style={{ background: STATUS_COLORS[s] }} aria-hidden="true" />
            {s.replace('_', ' ')} {stats.by_status[s]}
          </span>
        ))}
      </figcaption>
    </figure>
  )
}

type Pending = { action: 'cancel' | 'redrive'; ids: string[] | null; count: number }

export function RunsPage() {
  const route = useRoute()
  const filters = filtersOf(route.query)
  const key = search(filters)
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [pending, setPending] = useState<Pending | null>(null)
  const [report, setReport] = useState<BulkReport | null>(null)
  const [bulkError, setBulkError] = useState<ApiError | null>(null)
  const [busy, setBusy] = useState(false)
  const { me } = useSession()
  const admin = Boolean(me?.access_control && me.scopes.includes('admin'))
  const canRun = !me?.access_control || Boolean(me?.scopes.includes('run') || me?.scopes.includes('admin'))
  useEffect(() => {
    setCursors([undefined])
    setSelected(new Set())
  }, [key])
  const cursor = cursors[cursors.length - 1]
  const asked = { ...filters, ...(admin ? {} : { owner: undefined }), limit: PAGE, cursor }
  const runs = useApi(
    () => http.get('/runs', { params: { query: asked as never } }) as Promise<RunList>,
    [key, cursor, admin],
    `GET /runs${key}`,
  )
  const statsFilters = { ...filters, sort: undefined, ...(admin ? {} : { owner: undefined }) }
  const stats = useApi(
    () => http.get('/runs/stats', { params: { query: statsFilters as never } }) as Promise<RunStats>,
    [key, admin],
    'GET /runs/stats',
  )
  const now = useNow(Boolean(runs.data?.runs.some((r) => r.duration_ms === null)))
  const workflows = useApi(() => http.get('/workflows'), [], 'GET /workflows')
  const keys = useApi(() => (admin ? http.get('/keys') : Promise.resolve(null)), [admin], 'GET /keys')
  const listed = runs.data?.runs ?? []
  const showOwner = listed.some((r) => r.owner)
  const active = listed.some((r) => ['pending', 'running', 'waiting_input'].includes(r.status))
  useEffect(() => {
    if (!active) return
    const t = setInterval(runs.reload, 3000)
    return () => clearInterval(t)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [active, key, cursor])

  const apply = (next: Filters) => navigate(`/runs${search(next)}`)
  const set = (name: string, value: string) => apply({ ...filters, [name]: value })
  const statuses = (filters.status ?? '').split(',').filter(Boolean)

  const [valueDraft, setValueDraft] = useState(valueText(filters))
  const [errorDraft, setErrorDraft] = useState(filters.error ?? '')
  const [nameDraft, setNameDraft] = useState(filters.trigger_name ?? '')
  useEffect(() => {
    setValueDraft(valueText(filters))
    setErrorDraft(filters.error ?? '')
    setNameDraft(filters.trigger_name ?? '')
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key])
  const submit = (e: FormEvent) => {
    e.preventDefault()
    const next = withoutValues(filters)
    const value = valueFilter(valueDraft)
    if (value) next[value[0]] = value[1]
    next.error = errorDraft.trim()
    next.trigger_name = nameDraft.trim()
    apply(next)
  }

  const confirmRef = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (pending) confirmRef.current?.focus()
  }, [pending])
  const bulkQuery = { ...filters, sort: undefined, ...(admin ? {} : { owner: undefined }) }
  const post = (action: 'cancel' | 'redrive', body: { run_ids?: string[]; dry_run?: boolean }) =>
    (action === 'cancel'
      ? http.post('/runs/cancel', { params: { query: bulkQuery as never }, body })
      : http.post('/runs/redrive', { params: { query: bulkQuery as never }, body })) as Promise<BulkReport>
  const ask = async (action: 'cancel' | 'redrive', ids: string[] | null) => {
    setReport(null)
    setBulkError(null)
    if (ids) {
      setPending({ action, ids, count: ids.length })
      return
    }
    setBusy(true)
    try {
      const preview = await post(action, { dry_run: true })
      setPending({ action, ids: null, count: preview.matched })
    } catch (exc) {
      setBulkError(toApiError(exc, `POST /runs/${action}`))
    } finally {
      setBusy(false)
    }
  }
  const act = async () => {
    if (!pending) return
    setBusy(true)
    try {
      const done = await post(pending.action, pending.ids ? { run_ids: pending.ids } : {})
      setReport(done)
      setSelected(new Set())
      runs.reload()
      stats.reload()
    } catch (exc) {
      setBulkError(toApiError(exc, `POST /runs/${pending.action}`))
    } finally {
      setBusy(false)
      setPending(null)
    }
  }
  const toggle = (id: string) => {
    const next = new Set(selected)
    if (next.has(id)) next.delete(id)
    else next.add(id)
    setSelected(next)
  }
  const allOnPage = listed.length > 0 && listed.every((r) => selected.has(r.run_id))
  const page = cursors.length
  const total = runs.data ? `${runs.data.total}${runs.data.total_exact ? '' : '+'}` : ''

  return (
    <div className="page">
      <div className="row spread">
        <h1>Runs</h1>
        <button type="button" onClick={() => { runs.reload(); stats.reload() }}>Refresh</button>
      </div>
      <form className="filters row" data-testid="run-filters" onSubmit={submit} aria-label="Run filters">
        <label>
          workflow{' '}
          <select aria-label="Workflow filter" value={filters.workflow_id ?? ''} onChange={(e) => set('workflow_id', e.target.value)}>
            <option value="">any</option>
            {(workflows.data?.workflows ?? []).map((w) => (
              <option key={w.id} value={w.id}>{w.id}</option>
            ))}
            {filters.workflow_id && !(workflows.data?.workflows ?? []).some((w) => w.id === filters.workflow_id) && <option value={filters.workflow_id}>{filters.workflow_id}</option>}
          </select>
        </label>
        <label>
          status{' '}
          <select
            aria-label="Status filter"
            multiple
            size={3}
            value={statuses}
            onChange={(e) => set('status', [...e.target.selectedOptions].map((o) => o.value).join(','))}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>{s.replace('_', ' ')}</option>
            ))}
          </select>
        </label>
        <label>
          trigger{' '}
          <select aria-label="Trigger filter" value={filters.trigger ?? ''} onChange={(e) => set('trigger', e.target.value)}>
            <option value="">any</option>
            <option value="manual">manual</option>
            <option value="schedule">schedule</option>
            <option value="webhook">webhook</option>
          </select>
        </label>
        <label>
          trigger name <input aria-label="Trigger name" value={nameDraft} size={10} onChange={(e) => setNameDraft(e.target.value)} />
        </label>
        {admin && (
          <label>
            owner{' '}
            <select aria-label="Owner filter" value={filters.owner ?? ''} onChange={(e) => set('owner', e.target.value)}>
              <option value="">anyone</option>
              {ownerChoices(me, keys.data, listed.map((r) => r.owner), filters.owner ?? '').map(([id, label]) => (
                <option key={id} value={id}>{label}</option>
              ))}
            </select>
          </label>
        )}
        <label>
          since <input type="datetime-local" aria-label="Since" value={toLocal(filters.since)} onChange={(e) => set('since', toIso(e.target.value) ?? '')} />
        </label>
        <label>
          until <input type="datetime-local" aria-label="Until" value={toLocal(filters.until)} onChange={(e) => set('until', toIso(e.target.value) ?? '')} />
        </label>
        <label>
          value{' '}
          <input aria-label="Param or output value" placeholder="passenger=Ada" value={valueDraft} size={16} onChange={(e) => setValueDraft(e.target.value)} />
        </label>
        <label>
          error <input aria-label="Error text" placeholder="part of the message" value={errorDraft} size={14} onChange={(e) => setErrorDraft(e.target.value)} />
        </label>
        <label>
          sort{' '}
          <select aria-label="Sort" value={filters.sort ?? '-created_at'} onChange={(e) => set('sort', e.target.value === '-created_at' ? '' : e.target.value)}>
            <option value="-created_at">newest first</option>
            <option value="created_at">oldest first</option>
            <option value="-finished_at">ended last first</option>
            <option value="finished_at">ended first first</option>
          </select>
        </label>
        <button type="submit">Search</button>
        {Object.keys(filters).length > 0 && (
          <button type="button" onClick={() => apply({})}>Clear</button>
        )}
      </form>
      <ErrorBox error={stats.error} title="Could not count the runs" />
      {stats.data && <RunChart stats={stats.data} />}
      <ErrorBox error={runs.error} title="Could not list the runs" />
      {canRun && runs.data && runs.data.runs.length > 0 && (
        <div className="row bulk-actions" data-testid="bulk-actions">
          <button type="button" disabled={busy || selected.size === 0} onClick={() => ask('cancel', [...selected])}>
            Cancel selected ({selected.size})
          </button>
          <button type="button" disabled={busy || selected.size === 0} onClick={() => ask('redrive', [...selected])}>
            Redrive selected ({selected.size})
          </button>
          <button type="button" disabled={busy || Object.keys(filters).length === 0} onClick={() => ask('cancel', null)} title="Every run the filters match that has not ended (at most 500)">
            Cancel all matching
          </button>
          <button type="button" disabled={busy || Object.keys(filters).length === 0} onClick={() => ask('redrive', null)} title="Every failed or cancelled run the filters match (at most 500)">
            Redrive all matching
          </button>
        </div>
      )}
      {pending && (
        <div className="confirm-box" role="alertdialog" aria-modal="false" aria-labelledby="bulk-question" data-testid="bulk-confirm"
          onKeyDown={(e) => { if (e.key === 'Escape') setPending(null) }}>
          <p id="bulk-question">
            {pending.count === 0
              ? `No run here can be ${pending.action === 'cancel' ? 'cancelled' : 'redriven'}.`
              : `${pending.action === 'cancel' ? 'Cancel' : 'Redrive'} ${pending.count} run${pending.count === 1 ? '' : 's'}${pending.ids ? '' : ' matching the filters'}?`}
            {pending.action === 'cancel' && pending.count > 0 && ' Their running steps stop and compensations run.'}
          </p>
          <div className="row">
            {pending.count > 0 && (
              <button type="button" ref={confirmRef} className="danger" disabled={busy} onClick={act}>
                {pending.action === 'cancel' ? 'Cancel' : 'Redrive'} {pending.count} run{pending.count === 1 ? '' : 's'}
              </button>
            )}
            <button type="button" onClick={() => setPending(null)}>Back</button>
          </div>
        </div>
      )}
      <ErrorBox error={bulkError} title="The bulk action did not run" />
      {report && (
        <div className="bulk-report" data-testid="bulk-report" role="status">
          <p>
            {report.action === 'cancel' ? 'Cancel' : 'Redrive'}: {Object.entries(report.counts).map(([o, n]) => `${n} ${o.replace('_', ' ')}`).join(', ') || 'no runs'}
          </p>
          <ul>
            {report.results.filter((r) => r.outcome === 'skipped' || r.outcome === 'failed' || r.new_run_id).map((r) => (
              <li key={r.run_id}>
                <code>{r.run_id.slice(0, 8)}</code> {r.outcome}
                {r.reason && `: ${r.reason}`}
                {r.new_run_id && <> → <a href={href('runs', r.new_run_id)}><code>{r.new_run_id.slice(0, 8)}</code></a></>}
              </li>
            ))}
          </ul>
        </div>
      )}
      {runs.data && (
        <>
          <table className="list-table" data-testid="run-list">
            <thead>
              <tr>
                {canRun && (
                  <th>
                    <input type="checkbox" aria-label="Select every run on this page" checked={allOnPage}
                      onChange={() => setSelected(allOnPage ? new Set() : new Set(listed.map((r) => r.run_id)))} />
                  </th>
                )}
                <th>run</th>
                <th>workflow</th>
                <th>status</th>
                <th>trigger</th>
                {showOwner && <th>owner</th>}
                <th>created</th>
                <th>duration</th>
                <th>error</th>
              </tr>
            </thead>
            <tbody>
              {listed.map((r) => (
                <tr key={r.run_id} data-run={r.run_id}>
                  {canRun && (
                    <td data-label="select">
                      <input type="checkbox" aria-label={`Select run ${r.run_id.slice(0, 8)}`} checked={selected.has(r.run_id)} onChange={() => toggle(r.run_id)} />
                    </td>
                  )}
                  <td data-label="run"><a href={href('runs', r.run_id)}><code>{r.run_id.slice(0, 8)}</code></a></td>
                  <td data-label="workflow"><a href={href('workflows', r.workflow_id)}>{r.workflow_id}</a></td>
                  <td data-label="status"><StatusBadge status={r.status} /></td>
                  <td data-label="trigger" data-testid="run-trigger" className={r.trigger ? '' : 'muted'}>{triggerText(r.trigger)}</td>
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
          {listed.length === 0 && <p className="muted">No runs match. Start one from a workflow.</p>}
          <div className="row">
            <button type="button" disabled={page === 1} onClick={() => setCursors(cursors.slice(0, -1))}>Newer</button>
            <span className="muted" data-testid="run-count">
              page {page} · {listed.length} of {total}
            </span>
            <button type="button" disabled={!runs.data.next_cursor} onClick={() => setCursors([...cursors, runs.data?.next_cursor ?? undefined])}>Older</button>
          </div>
        </>
      )}
    </div>
  )
}
