// The single-shot result, stage by stage: selected tool, HTTP request (secrets masked by the
// backend), raw response, formatted answer — each with its status, time and error.
import type { PipelineResponse } from '../api/types'
import { formatDuration } from '../lib/format'
import { buildStages, type Stage } from '../lib/stages'
import { JsonBlock } from './JsonBlock'

function StageBody({ stage, r }: { stage: Stage; r: PipelineResponse }) {
  switch (stage.key) {
    case 'selection':
      return r.selected_tool ? (
        <>
          <div className="selected-tool">
            <code>{r.selected_tool}</code>
          </div>
          {r.arguments && <JsonBlock label="arguments" value={r.arguments} />}
          <div className="muted">
            LLM: {r.usage.llm_calls} call(s), {r.usage.total_tokens} tokens
          </div>
        </>
      ) : null
    case 'request':
      return r.http_spec ? (
        <>
          <div className="http-line">
            <span className="method">{r.http_spec.method}</span> <code>{r.http_spec.url}</code>
          </div>
          <JsonBlock value={{ ...r.http_spec, method: undefined, url: undefined }} />
        </>
      ) : null
    case 'response':
      return r.raw_response ? (
        <>
          <div className="http-line">
            HTTP <strong>{r.raw_response.status_code}</strong>
          </div>
          <JsonBlock label="body" value={r.raw_response.body} />
          {r.raw_response.headers && <JsonBlock label="headers" value={r.raw_response.headers} />}
        </>
      ) : null
    case 'formatting':
      return r.formatted_response ? <div className="formatted">{r.formatted_response}</div> : null
  }
}

export function StagePanel({ response, formatRequested }: { response: PipelineResponse; formatRequested: boolean }) {
  const stages = buildStages(response, formatRequested)
  return (
    <div className="stage-panel" data-testid="stage-panel">
      <div className="stage-summary">
        Overall: <strong className={`outcome-${response.status}`}>{response.status}</strong>
        {response.error_stage && (
          <span>
            {' '}
            — failed at <code>{response.error_stage}</code>
          </span>
        )}{' '}
        · total {formatDuration(response.timings_ms.total)}
      </div>
      {stages.map((stage) => (
        <section key={stage.key} className={`stage stage-${stage.status.replace(' ', '-')}`} data-testid={`stage-${stage.key}`} data-stage-status={stage.status}>
          <header>
            <span className="stage-title">{stage.title}</span>
            <span className="stage-status">{stage.status}</span>
            <span className="stage-time">{formatDuration(stage.timeMs)}</span>
          </header>
          {stage.error && <div className="stage-error">{stage.error}</div>}
          {stage.note && <div className="muted">{stage.note}</div>}
          <StageBody stage={stage} r={response} />
        </section>
      ))}
      {response.warnings.length > 0 && (
        <ul className="warnings">
          {response.warnings.map((w, i) => (
            <li key={i}>⚠ {w}</li>
          ))}
        </ul>
      )}
    </div>
  )
}
