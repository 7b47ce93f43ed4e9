// Start a run of a workflow with a form generated from its params (GET /workflows/{id}/inputs),
// or with the params typed as JSON (a toggle keeps what was typed); `initial` pre-fills them (a
// new run from an earlier one). The backend's 422 names each bad field: shown under the field
// in the form, listed with its path as JSON.
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import { fieldsFromInputs, paramsFromJson } from '../lib/fields'
import { href, navigate } from '../lib/router'
import { useApi } from '../lib/useApi'
import { ScopedButton } from './Access'
import { ErrorBox } from './ErrorBox'
import { ParamsForm } from './ParamsForm'

interface Props {
  workflowId: string
  note?: string
  /** Params to start from (an earlier run's). */
  initial?: Record<string, unknown>
  title?: string
  onClose?: () => void
}

export function RunStartPanel({ workflowId, note, initial, title, onClose }: Props) {
  const path = `/workflows/${encodeURIComponent(workflowId)}/inputs`
  const inputs = useApi(() => http.get('/workflows/{workflow_id}/inputs', { params: { path: { workflow_id: workflowId } } }), [path], `GET ${path}`)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | null>(null)
  const [mode, setMode] = useState<'form' | 'json'>('form')
  const [draft, setDraft] = useState<Record<string, unknown>>(initial ?? {})
  const [formKey, setFormKey] = useState(0) // a new form from `draft` after JSON edits
  const [jsonText, setJsonText] = useState('')
  const [jsonError, setJsonError] = useState<string | null>(null)
  const start = async (values: Record<string, unknown>) => {
    const where = `/workflows/${encodeURIComponent(workflowId)}/runs`
    setBusy(true)
    setError(null)
    setDraft(values)
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
  const toJson = () => {
    setJsonText(JSON.stringify(draft, null, 2))
    setJsonError(null)
    setMode('json')
  }
  const toForm = () => {
    const parsed = paramsFromJson(jsonText)
    if ('error' in parsed) {
      setJsonError(parsed.error)
      return
    }
    setDraft(parsed.values)
    setFormKey((k) => k + 1)
    setMode('form')
  }
  const startJson = () => {
    const parsed = paramsFromJson(jsonText)
    if ('error' in parsed) setJsonError(parsed.error)
    else {
      setJsonError(null)
      void start(parsed.values)
    }
  }
  const violations = error?.violations ?? []
  return (
    <div className="card run-start" data-testid="run-start">
      <div className="row spread">
        <h2>{title ?? <>Start a run of <code>{workflowId}</code></>}</h2>
        <div className="row">
          <div className="segmented" role="group" aria-label="Edit the params as">
            <button type="button" aria-pressed={mode === 'form'} onClick={() => mode === 'json' && toForm()}>Form</button>
            <button type="button" aria-pressed={mode === 'json'} onClick={() => mode === 'form' && toJson()} data-testid="params-as-json">JSON</button>
          </div>
          {onClose && <button type="button" onClick={onClose}>Close</button>}
        </div>
      </div>
      {note && <div className="muted small">{note}</div>}
      <ErrorBox error={inputs.error} title="Could not read the params" />
      {inputs.data && mode === 'form' && (
        <ParamsForm
          key={`${path}#${formKey}`}
          testId="run-params"
          fields={fieldsFromInputs(inputs.data.params)}
          submitLabel="Start run"
          scope="run"
          busy={busy}
          violations={violations}
          violationPrefix="params"
          initial={draft}
          onValues={(values) => setDraft((d) => ({ ...Object.fromEntries(Object.entries(d).filter(([k]) => !inputs.data?.params.some((p) => p.name === k))), ...values }))}
          onSubmit={(values) => void start(values)}
        />
      )}
      {mode === 'json' && (
        <form
          className="params-form"
          data-testid="run-params-json"
          onSubmit={(e) => {
            e.preventDefault()
            startJson()
          }}
        >
          <label htmlFor="run-params-json-text">params (a JSON object)</label>
          <textarea id="run-params-json-text" rows={8} spellCheck={false} value={jsonText} onChange={(e) => setJsonText(e.target.value)} />
          {jsonError && <div className="field-error">{jsonError}</div>}
          {violations.length > 0 && (
            <ul className="violations" data-testid="run-params-violations">
              {violations.map((v, i) => (
                <li key={i}>{v.path ? <code>{v.path}</code> : null} {v.message}</li>
              ))}
            </ul>
          )}
          <div className="row">
            <ScopedButton scope="run" showReason type="submit" className="primary" disabled={busy}>{busy ? 'Working…' : 'Start run'}</ScopedButton>
          </div>
        </form>
      )}
      <ErrorBox error={error} title="The run did not start" />
    </div>
  )
}
