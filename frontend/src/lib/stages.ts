// The single-shot result as four stages, each with its status, time and error.
import type { PipelineResponse, StageName } from '../api/types'

export type StageStatus = 'ok' | 'error' | 'warning' | 'not reached' | 'skipped'

export interface Stage {
  key: 'selection' | 'request' | 'response' | 'formatting'
  title: string
  status: StageStatus
  timeMs: number | null
  error: string | null
  note: string | null
  backendStages: StageName[]
}

const ORDER: StageName[] = ['tool_retrieval', 'tool_context_generation', 'llm_selection', 'api_execution', 'result_sql', 'response_formatting']

function sum(r: PipelineResponse, names: StageName[]): number | null {
  const values = names.map((n) => r.timings_ms[n]).filter((v): v is number => typeof v === 'number')
  return values.length ? values.reduce((a, b) => a + b, 0) : null
}

export function buildStages(r: PipelineResponse, formatRequested: boolean): Stage[] {
  const failedAt = r.error_stage ? ORDER.indexOf(r.error_stage) : -1
  const reached = (name: StageName) => failedAt < 0 || ORDER.indexOf(name) <= failedAt
  const errorIn = (names: StageName[]) => (r.error_stage && names.includes(r.error_stage) ? r.error : null)

  const selNames: StageName[] = ['tool_retrieval', 'tool_context_generation', 'llm_selection']
  const selError = errorIn(selNames)
  const selection: Stage = {
    key: 'selection',
    title: 'Selected tool',
    status: selError ? 'error' : r.selected_tool ? 'ok' : 'not reached',
    timeMs: sum(r, selNames),
    error: selError ? `${r.error_stage}: ${selError}` : null,
    note: null,
    backendStages: selNames,
  }

  const reqError = errorIn(['api_execution'])
  const request: Stage = {
    key: 'request',
    title: 'HTTP request',
    status: reqError ? 'error' : r.http_spec ? 'ok' : 'not reached',
    timeMs: reached('api_execution') ? (r.timings_ms.api_execution ?? null) : null,
    error: reqError ? `api_execution: ${reqError}` : null,
    note: r.http_spec ? 'built in code from the registry; secrets shown as ***' : null,
    backendStages: ['api_execution'],
  }

  const code = r.raw_response?.status_code
  const sqlError = errorIn(['result_sql'])
  const response: Stage = {
    key: 'response',
    title: 'Raw response',
    status: sqlError ? 'error' : r.raw_response ? (code && code >= 400 ? 'warning' : 'ok') : 'not reached',
    timeMs: r.raw_response?.execution_time_ms ?? null,
    error: sqlError ? `result_sql: ${sqlError}` : null,
    note: code && code >= 400 ? `the API answered HTTP ${code} (reported, not a pipeline failure)` : null,
    backendStages: ['result_sql'],
  }

  const formatWarnings = r.warnings.filter((w) => /format/i.test(w))
  let fmtStatus: StageStatus
  if (!formatRequested) fmtStatus = 'skipped'
  else if (r.formatted_response) fmtStatus = 'ok'
  else if (r.status === 'error') fmtStatus = 'not reached'
  else fmtStatus = 'warning'
  const formatting: Stage = {
    key: 'formatting',
    title: 'Formatted answer',
    status: fmtStatus,
    timeMs: r.timings_ms.response_formatting ?? null,
    error: fmtStatus === 'warning' ? (formatWarnings.join('; ') || r.warnings.join('; ') || 'no formatted answer') : null,
    note: formatRequested ? null : 'not requested (tick “Format the response”)',
    backendStages: ['response_formatting'],
  }
  return [selection, request, response, formatting]
}
