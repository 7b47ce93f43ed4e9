// A workflow's schedules and webhooks (#/workflows/<id>/triggers): each schedule's next fire times
// and last ticks with pause / resume / run now; each webhook's URL, secret, last deliveries and a
// signed example to copy as curl. Times are the user's local time (the ISO instant as tooltip).
import { useEffect } from 'react'
import { http } from '../api/client'
import { ErrorBox } from '../components/ErrorBox'
import { ScheduleCard } from '../components/ScheduleCard'
import { WebhookCard } from '../components/WebhookCard'
import { href } from '../lib/router'
import { due, noTriggers } from '../lib/triggers'
import { useApi } from '../lib/useApi'
import { useNow } from '../lib/useNow'

const EXAMPLE_TRIGGERS = `    triggers:
      - schedule: weekdays
        cron: "30 7 * * 1-5"
        timezone: Europe/Amsterdam
        params: {asked_at: $trigger.time}
      - webhook: reopened
        secret: secret:REPORT_HOOK
        params: {asked_at: $body.at}`

export function TriggersPage({ workflowId }: { workflowId: string }) {
  const path = { workflow_id: workflowId }
  const schedules = useApi(() => http.get('/workflows/{workflow_id}/schedules', { params: { path } }), [workflowId], `GET /workflows/${workflowId}/schedules`)
  const webhooks = useApi(() => http.get('/workflows/{workflow_id}/webhooks', { params: { path } }), [workflowId], `GET /workflows/${workflowId}/webhooks`)
  const now = useNow(true, 1000)
  // a fire time gone by: the list is read again (its ticks, the next five from now)
  const reloadSchedules = schedules.reload
  const stale = due(schedules.data?.schedules ?? [], now)
  useEffect(() => {
    if (stale) reloadSchedules() // once per passing: a skewed clock is not a loop
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stale])
  const loaded = schedules.data !== null && webhooks.data !== null
  const reload = () => {
    schedules.reload()
    webhooks.reload()
  }

  return (
    <div className="page triggers-page">
      <div className="row spread">
        <h1>
          Schedules &amp; webhooks of <a href={href('workflows', workflowId)}><code>{workflowId}</code></a>
        </h1>
        <div className="row">
          <button type="button" onClick={reload}>Refresh</button>
          <a className="button" href={`${href('runs')}?workflow_id=${encodeURIComponent(workflowId)}`}>Runs</a>
        </div>
      </div>
      <p className="lead">
        What starts runs of this workflow by itself: its document&apos;s <code>triggers</code>. Times are in your local time; hover one for the exact instant.
      </p>
      <ErrorBox error={schedules.error} title="Could not load the schedules" />
      <ErrorBox error={webhooks.error} title="Could not load the webhooks" />
      {!loaded && !schedules.error && !webhooks.error && <div className="muted">loading…</div>}
      {loaded && noTriggers(schedules.data?.schedules, webhooks.data?.webhooks) && (
        <div className="card" data-testid="no-triggers">
          <p>This workflow has no schedule and no webhook. Add them to its document, under the workflow, for example:</p>
          <pre tabIndex={0}>{EXAMPLE_TRIGGERS}</pre>
          <p className="small muted">
            <a href={href('workflows', workflowId)}>Open the document</a> to edit it.
          </p>
        </div>
      )}
      {schedules.data && schedules.data.schedules.length > 0 && (
        <section aria-labelledby="schedules-title" data-testid="schedules">
          <h2 id="schedules-title">Schedules</h2>
          {schedules.data.schedules.map((s) => (
            <ScheduleCard
              key={s.name}
              workflowId={workflowId}
              schedule={s}
              now={now}
              onChanged={(view) => {
                if (!view) return schedules.reload()
                schedules.setData((list) => list && { ...list, schedules: list.schedules.map((x) => (x.name === view.name ? view : x)) })
              }}
            />
          ))}
        </section>
      )}
      {webhooks.data && webhooks.data.webhooks.length > 0 && (
        <section aria-labelledby="webhooks-title" data-testid="webhooks">
          <h2 id="webhooks-title">Webhooks</h2>
          {webhooks.data.webhooks.map((w) => (
            <WebhookCard key={w.name} workflowId={workflowId} hook={w} now={now} />
          ))}
        </section>
      )}
    </div>
  )
}
