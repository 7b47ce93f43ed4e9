// Start a run of a workflow with a form generated from its params (GET /workflows/{id}/inputs);
// the backend's 422 names each bad field.
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import { fieldsFromInputs } from '../lib/fields'
import { href, navigate } from '../lib/router'
import { useApi } from '../lib/useApi'
import { ErrorBox } from './ErrorBox'
import { ParamsForm } from './ParamsForm'

export function RunStartPanel({ workflowId, note }: { workflowId: string; note?: string }) {
  const path = `/workflows/${encodeURIComponent(workflowId)}/inputs`
  const inputs = useApi(() => http.get('/workflows/{workflow_id}/inputs', { params: { path: { workflow_id: workflowId } } }), [path], `GET ${path}`)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | null>(null)
  const start = async (values: Record<string, unknown>) => {
    const where = `/workflows/${encodeURIComponent(workflowId)}/runs`
    setBusy(true)
    setError(null)
    try {
      const run = await http.post('/workflows/{workflow_id}/runs', {
        params: { path: { workflow_id: workflowId } },
        body: { params: values },
      })
      navigate(href('runs', run.run_id))
    } catch (exc) {
      setError(toApiError(exc, `POST ${where}`))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div className="card run-start" data-testid="run-start">
      <h3>Start a run of <code>{workflowId}</code></h3>
      {note && <div className="muted small">{note}</div>}
      <ErrorBox error={inputs.error} title="Could not read the params" />
      {inputs.data && (
        <ParamsForm
          key={path}
          testId="run-params"
          fields={fieldsFromInputs(inputs.data.params)}
          submitLabel="Start run"
          scope="run"
          busy={busy}
          violations={error?.violations}
          violationPrefix="params"
          onSubmit={(values) => void start(values)}
        />
      )}
      <ErrorBox error={error} title="The run did not start" />
    </div>
  )
}
