// Run actions: cancel (while active), re-run with the same params (linked to the original),
// a new run from this one (its params pre-filled, editable), re-run a failed run from the failed
// node (a redrive: what succeeded is reused; a preview says which nodes and why before it
// starts), export the run and its events as JSON. Acting on a run needs the 'run' scope and, unless admin, owning it.
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import type { RunDetail, RunEvent } from '../api/types'
import { TERMINAL_RUN } from '../api/types'
import { href, navigate } from '../lib/router'
import { useCan } from '../lib/session'
import { BlockedNote, ScopedButton } from './Access'
import { Dialog } from './Dialog'
import { ErrorBox } from './ErrorBox'

interface RedrivePlan {
  allowChanged: boolean
  reused: string[]
  runsAgain: Record<string, string>
}

const RERUN_KEY = 'dt.rerunOf'

export function originalOf(runId: string): string | null {
  try {
    const map = JSON.parse(localStorage.getItem(RERUN_KEY) ?? '{}') as Record<string, string>
    return map[runId] ?? null
  } catch {
    return null
  }
}

function rememberRerun(newId: string, originalId: string) {
  try {
    const map = JSON.parse(localStorage.getItem(RERUN_KEY) ?? '{}') as Record<string, string>
    map[newId] = originalId
    localStorage.setItem(RERUN_KEY, JSON.stringify(map))
  } catch {
    /* the link is a convenience */
  }
}

export function exportRun(run: RunDetail, events: RunEvent[]): void {
  const blob = new Blob([JSON.stringify({ run, events }, null, 2)], { type: 'application/json' })
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = `run-${run.run_id}.json`
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

export function RunActions({ run, events, onChanged, onNewRun }: { run: RunDetail; events: RunEvent[]; onChanged: () => void; onNewRun?: () => void }) {
  const [error, setError] = useState<ApiError | null>(null)
  const [plan, setPlan] = useState<RedrivePlan | null>(null)
  const [busy, setBusy] = useState(false)
  const owner = run.owner ?? null
  const mayRun = useCan('run')
  const permit = useCan('run', owner)
  const act = async (where: string, request: () => Promise<{ run_id: string }>, then: (r: { run_id: string }) => void) => {
    setBusy(true)
    setError(null)
    try {
      then(await request())
    } catch (exc) {
      setError(toApiError(exc, where))
    } finally {
      setBusy(false)
    }
  }
  const cancel = () => act(`POST /runs/${run.run_id}/cancel`, () => http.post('/runs/{run_id}/cancel', { params: { path: { run_id: run.run_id } } }), onChanged)
  const where = `POST /runs/${run.run_id}/redrive`
  // First the preview (dry_run: nothing starts), then the redrive on Start.
  const preview = async (allowChanged: boolean) => {
    setBusy(true)
    setError(null)
    try {
      const r = await http.post('/runs/{run_id}/redrive', { params: { path: { run_id: run.run_id } }, body: { allow_changed_document: allowChanged, dry_run: true } })
      setPlan({ allowChanged, reused: r.reused, runsAgain: r.runs_again })
    } catch (exc) {
      setError(toApiError(exc, where))
    } finally {
      setBusy(false)
    }
  }
  const redrive = (allowChanged: boolean) =>
    act(
      where,
      async () => {
        const r = await http.post('/runs/{run_id}/redrive', { params: { path: { run_id: run.run_id } }, body: { allow_changed_document: allowChanged } })
        if (!('run_id' in r)) throw new Error('the redrive answered a preview, not a run')
        return r
      },
      (r) => {
        setPlan(null)
        navigate(href('runs', r.run_id))
      },
    )
  const changed = error?.status === 409 && (error.body as { context?: { reason?: string } } | null)?.context?.reason === 'document_changed'
  const rerun = () =>
    act(`POST /workflows/${run.workflow_id}/runs`, () => http.post('/workflows/{workflow_id}/runs', { params: { path: { workflow_id: run.workflow_id } }, body: { params: run.params } }), (r) => {
      rememberRerun(r.run_id, run.run_id)
      navigate(href('runs', r.run_id))
    })
  return (
    <div className="run-actions">
      <div className="row">
        {!TERMINAL_RUN.has(run.status) && (
          <ScopedButton scope="run" owner={owner} type="button" className="danger" disabled={busy} onClick={() => void cancel()}>Cancel run</ScopedButton>
        )}
        {(run.status === 'failed' || run.status === 'cancelled') && (
          <ScopedButton scope="run" owner={owner} type="button" className="primary" disabled={busy} onClick={() => void preview(false)} title="A new run that reuses what succeeded and runs from the failed node on (shows which nodes first)">
            Re-run from the failed node
          </ScopedButton>
        )}
        {/* a re-run is a new run of one's own: the scope matters, not who owns this one */}
        <ScopedButton scope="run" type="button" disabled={busy} onClick={() => void rerun()} title="Start a new run with the same params">Re-run</ScopedButton>
        {onNewRun && (
          <ScopedButton scope="run" type="button" disabled={busy} onClick={onNewRun} title="Open the run form with this run's params, to edit before it starts" data-testid="new-run-from-this">
            New run from this one
          </ScopedButton>
        )}
        <button type="button" onClick={() => exportRun(run, events)}>Export JSON</button>
      </div>
      <BlockedNote permit={permit} what={mayRun.allowed ? 'Cancel and re-run from the failed node' : 'Cancel and re-run'} testId="run-actions-blocked" />
      <ErrorBox error={plan ? null : error} />
      {changed && !plan && (
        <ScopedButton scope="run" owner={owner} type="button" disabled={busy} onClick={() => void preview(true)} data-testid="redrive-anyway">
          Reuse the recorded outputs anyway
        </ScopedButton>
      )}
      {plan && (
        <Dialog title="Re-run from the failed node" onCancel={() => setPlan(null)} testId="redrive-preview">
          <p className="muted small">
            A new run of <code>{run.workflow_id}</code> with the same params, linked to this one. Nothing has started yet.
            {plan.allowChanged && ' The workflow changed since this run: the recorded outputs are reused by node id.'}
          </p>
          <h3>Reused ({plan.reused.length}): their recorded outputs are taken, not run again</h3>
          {plan.reused.length ? (
            <ul data-testid="redrive-reused">
              {plan.reused.map((id) => (
                <li key={id} data-node={id}><code>{id}</code></li>
              ))}
            </ul>
          ) : (
            <div className="muted small">none: every node runs again</div>
          )}
          <h3>Run again ({Object.keys(plan.runsAgain).length})</h3>
          <ul data-testid="redrive-runs-again">
            {Object.entries(plan.runsAgain).map(([id, why]) => (
              <li key={id} data-node={id}><code>{id}</code>: {why}</li>
            ))}
          </ul>
          <ErrorBox error={error} title="The redrive did not start" />
          <div className="row">
            <button type="button" className="primary" disabled={busy} onClick={() => void redrive(plan.allowChanged)} data-autofocus>
              {busy ? 'Starting…' : 'Start'}
            </button>
            <button type="button" onClick={() => setPlan(null)}>Cancel</button>
          </div>
        </Dialog>
      )}
    </div>
  )
}
