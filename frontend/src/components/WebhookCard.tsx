// One webhook of a workflow: the URL senders POST to, its secret (by name, set or not), what it
// maps into params, its filter, its last deliveries, and a signed example: a sample body the user
// edits, signed by the server, shown as a curl command to copy (or to run as it is).
import { useId, useRef, useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import { ScopedButton } from './Access'
import { CopyButton } from './CopyButton'
import { ErrorBox } from './ErrorBox'
import { LocalTime } from './LocalTime'
import { href } from '../lib/router'
import { shortId } from '../lib/format'
import { parseSampleBody, type WebhookExample, type WebhookView } from '../lib/triggers'

export function WebhookCard({ workflowId, hook, now }: { workflowId: string; hook: WebhookView; now: number }) {
  const [sample, setSample] = useState('{}')
  const [problem, setProblem] = useState<string | null>(null)
  const [example, setExample] = useState<WebhookExample | null>(null)
  const [error, setError] = useState<ApiError | null>(null)
  const [busy, setBusy] = useState(false)
  const urlRef = useRef<HTMLElement>(null)
  const curlRef = useRef<HTMLPreElement>(null)
  const bodyId = useId()

  const sign = async () => {
    const parsed = parseSampleBody(sample)
    if (!parsed.ok) {
      setProblem(parsed.error)
      return
    }
    setProblem(null)
    setBusy(true)
    setError(null)
    try {
      const made = await http.post('/workflows/{workflow_id}/webhooks/{name}/example', {
        params: { path: { workflow_id: workflowId, name: hook.name } },
        body: { body: parsed.value },
      })
      setExample(made)
    } catch (exc) {
      setExample(null)
      setError(toApiError(exc, `POST /workflows/${workflowId}/webhooks/${hook.name}/example`))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="card trigger-card" data-testid={`webhook-${hook.name}`} data-state={hook.enabled ? 'enabled' : 'disabled'} aria-labelledby={`webhook-${hook.name}-title`}>
      <h3 id={`webhook-${hook.name}-title`}>
        <code>{hook.name}</code>{' '}
        <span className={`badge trigger-state state-${hook.enabled ? 'firing' : 'disabled'}`}>{hook.enabled ? 'enabled' : 'disabled'}</span>
      </h3>
      {!hook.enabled && (
        <div className="trigger-note" data-testid="disabled-note">
          Disabled in the document (<code>enabled: false</code>): deliveries are refused.
        </div>
      )}
      <div className="webhook-url">
        <span className="muted small">POST to</span>{' '}
        <code ref={urlRef} data-testid="webhook-url">{hook.url}</code> <CopyButton text={hook.url} source={urlRef} label="Copy URL" />
      </div>
      <div className="trigger-facts small">
        <span>
          secret <code>{hook.secret}</code>{' '}
          {hook.secret_set ? (
            <span className="secret-ok" data-testid="secret-set">set ✓</span>
          ) : (
            <span className="secret-missing" data-testid="secret-missing">⚠ not set on the server: deliveries are refused</span>
          )}
        </span>
        {Object.keys(hook.params).length > 0 && (
          <span>
            params: <code>{JSON.stringify(hook.params)}</code>
          </span>
        )}
        {hook.filter && (
          <span>
            filter: <code>{hook.filter}</code>
          </span>
        )}
      </div>
      <h4>Last deliveries</h4>
      {hook.last_deliveries.length ? (
        <ul className="tick-list" data-testid="last-deliveries">
          {hook.last_deliveries.map((d) => (
            <li key={d.delivery_id}>
              <LocalTime iso={d.received_at} now={now} /> <code className="small">{d.delivery_id}</code> ·{' '}
              {d.run_id ? <a href={href('runs', d.run_id)}>run {shortId(d.run_id)}</a> : <span className="muted">filtered out: no run</span>}
            </li>
          ))}
        </ul>
      ) : (
        <div className="muted">no delivery yet</div>
      )}
      <div className="webhook-example">
        <h4>Try it: a signed example</h4>
        <label htmlFor={bodyId}>Sample body (JSON)</label>
        <textarea
          id={bodyId}
          rows={Math.min(12, Math.max(3, sample.split('\n').length))}
          spellCheck={false}
          value={sample}
          aria-invalid={problem !== null}
          aria-describedby={problem ? `${bodyId}-problem` : undefined}
          onChange={(e) => {
            setSample(e.target.value)
            setProblem(null)
          }}
        />
        {problem && <div id={`${bodyId}-problem`} className="field-error" role="alert">{problem}</div>}
        <div className="row">
          <ScopedButton scope="author" type="button" disabled={busy} onClick={() => void sign()} title="Signing uses the webhook's secret">
            {busy ? 'Signing…' : example ? 'Sign again' : 'Sign an example'}
          </ScopedButton>
        </div>
        <ErrorBox error={error} title="No example" />
        {example && (
          <div className="curl-example" data-testid="webhook-example">
            <div className="row spread">
              <span className="small muted">
                The signature holds for 5 minutes, and its <code>webhook-id</code> once: sign again to send another delivery.
              </span>
              <CopyButton text={example.curl} source={curlRef} label="Copy curl" />
            </div>
            <pre ref={curlRef} data-testid="webhook-curl">{example.curl}</pre>
          </div>
        )}
      </div>
    </section>
  )
}
