// Answer the yield a run waits on: its message and a form from its `expects`
// (POST /runs/{id}/resume; 422 names the bad field, 409 when it no longer waits).
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import type { Waiting } from '../api/types'
import { fieldsFromExpects } from '../lib/fields'
import { ErrorBox } from './ErrorBox'
import { JsonBlock } from './JsonBlock'
import { ParamsForm } from './ParamsForm'

interface Props {
  runId: string
  /** Who owns the run: only they (or an admin) may answer. */
  owner?: string | null
  waiting: Waiting
  context: { nodeId: string; output: unknown }[]
  onAnswered: () => void
}

export function YieldForm({ runId, owner, waiting, context, onAnswered }: Props) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | null>(null)
  const where = `/runs/${encodeURIComponent(runId)}/resume`
  const fields = fieldsFromExpects(waiting.expects)
  const picked = fields.some((f) => f.options) // the options already show what is offered
  const answer = async (values: Record<string, unknown>) => {
    setBusy(true)
    setError(null)
    try {
      await http.post('/runs/{run_id}/resume', { params: { path: { run_id: runId } }, body: { values, node_id: waiting.node_id } })
      onAnswered()
    } catch (exc) {
      setError(toApiError(exc, `POST ${where}`))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div className="card yield-form" data-testid="yield-form">
      <h2>
        Waiting for your answer at <code>{waiting.node_id}</code>
      </h2>
      <p className="yield-message">{waiting.message}</p>
      {context.map((c) => (
        <details key={c.nodeId} className="yield-context" open={context.length === 1 && !picked}>
          <summary>
            output of <code>{c.nodeId}</code>
          </summary>
          <JsonBlock value={c.output} />
        </details>
      ))}
      <ParamsForm
        key={waiting.node_id}
        testId="yield-values"
        fields={fields}
        submitLabel="Send answer"
        scope="run"
        owner={owner}
        busy={busy}
        violations={error?.violations}
        violationPrefix="values"
        onSubmit={(values) => void answer(values)}
      />
      <ErrorBox error={error} title="The answer was not accepted" />
    </div>
  )
}
