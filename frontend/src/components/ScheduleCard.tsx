// One schedule of a workflow: when it fires (cron or interval, zone), whether it fires (paused by
// whom, or disabled in the document), its next five fire times, its last ticks with what became
// of each, and pause / resume / run now.
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import { ScopedButton } from './Access'
import { ErrorBox } from './ErrorBox'
import { LocalTime } from './LocalTime'
import { href } from '../lib/router'
import { shortId } from '../lib/format'
import { cadence, type ScheduleView, scheduleState, type TickView } from '../lib/triggers'

const OUTCOME_CLASS: Record<TickView['outcome'], string> = {
  claimed: 'outcome-buffered',
  started: 'outcome-started',
  skipped: 'outcome-skipped',
  buffered: 'outcome-buffered',
  failed: 'outcome-failed',
}

export function ScheduleCard({
  workflowId,
  schedule,
  now,
  onChanged,
}: {
  workflowId: string
  schedule: ScheduleView
  now: number
  onChanged: (view: ScheduleView | null) => void
}) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | null>(null)
  const [started, setStarted] = useState<string | null>(null)
  const state = scheduleState(schedule)
  const path = { workflow_id: workflowId, name: schedule.name }
  const base = `/workflows/${workflowId}/schedules/${schedule.name}`

  const setPaused = async (paused: boolean) => {
    setBusy(true)
    setError(null)
    try {
      const view = paused
        ? await http.post('/workflows/{workflow_id}/schedules/{name}/pause', { params: { path } })
        : await http.post('/workflows/{workflow_id}/schedules/{name}/resume', { params: { path } })
      onChanged(view)
    } catch (exc) {
      setError(toApiError(exc, `POST ${base}/${paused ? 'pause' : 'resume'}`))
    } finally {
      setBusy(false)
    }
  }

  const runNow = async () => {
    if (!window.confirm(`Start a run of ${workflowId} now, with the params of schedule ${schedule.name}?`)) return
    setBusy(true)
    setError(null)
    setStarted(null)
    try {
      const run = await http.post('/workflows/{workflow_id}/schedules/{name}/run', { params: { path } })
      setStarted(run.run_id)
      onChanged(null)
    } catch (exc) {
      setError(toApiError(exc, `POST ${base}/run`))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="card trigger-card" data-testid={`schedule-${schedule.name}`} data-state={state} aria-labelledby={`schedule-${schedule.name}-title`}>
      <div className="row spread">
        <h3 id={`schedule-${schedule.name}-title`}>
          <code>{schedule.name}</code> <span className={`badge trigger-state state-${state}`} data-testid="schedule-state">{state}</span>
        </h3>
        <div className="row">
          {schedule.paused ? (
            <ScopedButton scope="author" type="button" disabled={busy} onClick={() => void setPaused(false)}>Resume</ScopedButton>
          ) : (
            <ScopedButton scope="author" type="button" disabled={busy || !schedule.enabled} title={schedule.enabled ? undefined : 'disabled in the document: nothing to pause'} onClick={() => void setPaused(true)}>
              Pause
            </ScopedButton>
          )}
          <ScopedButton scope="run" type="button" className="primary" disabled={busy} onClick={() => void runNow()}>Run now</ScopedButton>
        </div>
      </div>
      <div className="trigger-facts small">
        <code>{cadence(schedule)}</code>
        <span>overlap: {schedule.overlap}</span>
        <span>catch-up: {schedule.catch_up}</span>
        {Object.keys(schedule.params).length > 0 && (
          <span>
            params: <code>{JSON.stringify(schedule.params)}</code>
          </span>
        )}
      </div>
      {state === 'paused' && (
        <div className="trigger-note" data-testid="paused-by">
          Paused{schedule.paused_by ? ` by ${schedule.paused_by}` : ''}: it does not fire until resumed (missed ticks are not caught up).
        </div>
      )}
      {state === 'disabled' && (
        <div className="trigger-note" data-testid="disabled-note">
          Disabled in the document (<code>enabled: false</code>): it never fires; run now still starts a run.
        </div>
      )}
      {started && (
        <div className="ok-text" role="status" data-testid="run-now-started">
          Started run <a href={href('runs', started)}>{shortId(started)}</a>
        </div>
      )}
      <ErrorBox error={error} title={`Schedule ${schedule.name}`} />
      <div className="trigger-columns">
        <div>
          <h4>Next fire times</h4>
          {schedule.next_fire_times.length ? (
            <ol className="fire-times" data-testid="next-fire-times">
              {schedule.next_fire_times.map((t) => (
                <li key={t}>
                  <LocalTime iso={t} now={now} />
                </li>
              ))}
            </ol>
          ) : (
            <div className="muted" data-testid="next-fire-times-none">none: {state === 'paused' ? 'paused' : 'disabled'}</div>
          )}
        </div>
        <div>
          <h4>Last ticks</h4>
          {schedule.last_ticks.length ? (
            <ul className="tick-list" data-testid="last-ticks">
              {schedule.last_ticks.map((t) => (
                <li key={`${t.time}-${t.outcome}`} data-outcome={t.outcome}>
                  <LocalTime iso={t.time} now={now} /> <span className={`badge ${OUTCOME_CLASS[t.outcome]}`}>{t.outcome}</span>
                  {t.reason && <span className="muted small"> {t.reason}</span>}
                  {t.run_id && (
                    <>
                      {' '}· <a href={href('runs', t.run_id)}>run {shortId(t.run_id)}</a>
                    </>
                  )}
                </li>
              ))}
            </ul>
          ) : (
            <div className="muted">no tick yet</div>
          )}
        </div>
      </div>
    </section>
  )
}
