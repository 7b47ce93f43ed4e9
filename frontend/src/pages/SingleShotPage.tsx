// POST /workflow from a form: instructions, candidate tools, formatting; the result as stages.
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import type { PipelineRequest, PipelineResponse } from '../api/types'
import { ScopedButton } from '../components/Access'
import { ErrorBox } from '../components/ErrorBox'
import { useCan } from '../lib/session'
import { StagePanel } from '../components/StagePanel'
import { ToolPicker } from '../components/ToolPicker'
import { loadHistory, remember, type PastInput } from '../lib/history'
import { useApi } from '../lib/useApi'

export function SingleShotPage() {
  const tools = useApi(() => http.get('/tools'), [], 'GET /tools')
  const ready = useApi(() => http.get('/readyz'), [], 'GET /readyz')
  const llm = ready.data?.checks.llm
  const permit = useCan('run')
  const [instructions, setInstructions] = useState('')
  const [selected, setSelected] = useState<string[]>([])
  const [formatResponse, setFormatResponse] = useState(false)
  const [formatInstructions, setFormatInstructions] = useState('')
  const [history, setHistory] = useState<PastInput[]>(loadHistory)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | null>(null)
  const [result, setResult] = useState<{ response: PipelineResponse; formatRequested: boolean } | null>(null)

  // A refused request's errors are about the form: gone once the form changes.
  const edited = <T,>(set: (value: T) => void) => (value: T) => {
    set(value)
    setError((e) => (e && e.status === 422 ? null : e))
  }

  const recall = (index: number) => {
    const past = history[index]
    if (!past) return
    setInstructions(past.user_instructions)
    setSelected(past.tool_ids)
    setFormatResponse(past.format_response ?? false)
    setFormatInstructions(past.response_format_instructions ?? '')
  }

  const submit = async () => {
    const body: PipelineRequest = {
      user_instructions: instructions,
      tool_ids: selected,
      format_response: formatResponse,
      response_format_instructions: formatResponse && formatInstructions.trim() ? formatInstructions : null,
    }
    setBusy(true)
    setError(null)
    setResult(null)
    try {
      const response = await http.post('/workflow', { body })
      setResult({ response, formatRequested: formatResponse })
      setHistory(remember(body))
    } catch (exc) {
      setError(toApiError(exc, 'POST /workflow'))
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="page single-shot">
      <h1>Single-shot request</h1>
      <p className="lead">
        Describe what you want; the LLM picks one of the chosen tools and its arguments, the request is built and sent in code,
        and every stage is reported.
      </p>
      {llm?.configured && (
        <p className="lead" role="status" data-testid="llm-capabilities">
          {llm.method ? (
            <>
              The LLM is asked for a call by <strong>{llm.method}</strong>
              {llm.capabilities && <> (it can: {llm.capabilities.length ? llm.capabilities.join(', ') : 'none of the ways probed'})</>}
              {llm.source === 'probe' ? ', as the probe at start found' : llm.source === 'settings' ? ', as LLM_CAPABILITIES says' : ''}.
            </>
          ) : llm.probe === 'failed' ? (
            <>The LLM endpoint did not answer the probe at start; it is tried again at the next request.</>
          ) : (
            <>The LLM endpoint is being probed…</>
          )}
        </p>
      )}
      {llm && !llm.configured && (
        <div className="notice" role="status" data-testid="llm-missing">
          <strong>No LLM is configured on this server</strong>, so a request stops at the tool-selection stage. Set{' '}
          {llm.needs ?? 'OPENAI_API_KEY'} and restart the server. Workflows, tools and MCP work without one.
        </div>
      )}
      <form
        className="card"
        onSubmit={(e) => {
          e.preventDefault()
          if (permit.allowed) void submit()
        }}
      >
        <div className="row spread">
          <label htmlFor="instructions">Instructions</label>
          {history.length > 0 && (
            <select aria-label="Past inputs" value="" onChange={(e) => recall(Number(e.target.value))}>
              <option value="">Recall a past input…</option>
              {history.map((p, i) => (
                <option key={p.at} value={i}>
                  {p.user_instructions.slice(0, 70)} ({p.tool_ids.length} tools)
                </option>
              ))}
            </select>
          )}
        </div>
        <textarea id="instructions" rows={3} value={instructions} onChange={(e) => edited(setInstructions)(e.target.value)} placeholder="e.g. Find flights from AMS to BCN on 2026-12-01" />
        <label>Tools the LLM may choose from</label>
        <ErrorBox error={tools.error} title="Could not load the tools" />
        {tools.data && <ToolPicker tools={tools.data.tools} selected={selected} onChange={edited(setSelected)} />}
        <label className="inline">
          <input type="checkbox" checked={formatResponse} onChange={(e) => setFormatResponse(e.target.checked)} /> Format the response
          with the LLM
        </label>
        {formatResponse && (
          <textarea aria-label="Formatting instructions" rows={2} value={formatInstructions} onChange={(e) => setFormatInstructions(e.target.value)} placeholder="Formatting instructions (optional), e.g. one sentence with the cheapest flight" />
        )}
        <div className="row">
          <ScopedButton scope="run" showReason type="submit" className="primary" disabled={busy}>
            {busy ? 'Running…' : 'Run'}
          </ScopedButton>
          {!instructions.trim() && <span className="muted">write instructions</span>}
          {instructions.trim() && selected.length === 0 && <span className="muted">choose at least one tool</span>}
        </div>
      </form>
      <ErrorBox error={error} />
      {result && <StagePanel response={result.response} formatRequested={result.formatRequested} />}
    </div>
  )
}
