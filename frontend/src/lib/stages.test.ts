import { describe, expect, it } from 'vitest'
import type { PipelineResponse } from '../api/types'
import { buildStages } from './stages'

function response(over: Partial<PipelineResponse>): PipelineResponse {
  return {
    status: 'success', selected_tool: 'search_flights', arguments: { origin: 'AMS' },
    http_spec: { method: 'GET', url: 'http://x/flights', headers: { 'X-API-Key': '***' } },
    raw_response: { status_code: 200, headers: {}, body: [], execution_time_ms: 3 },
    formatted_response: null, error: null, error_stage: null, warnings: [], sql: null,
    timings_ms: { tool_retrieval: 1, tool_context_generation: 2, llm_selection: 10, api_execution: 4, total: 17 },
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, llm_calls: 1 },
    ...over,
  }
}

const byKey = (r: PipelineResponse, fmt = false) => Object.fromEntries(buildStages(r, fmt).map((s) => [s.key, s]))

describe('buildStages', () => {
  it('reports every stage of a success with its time', () => {
    const s = byKey(response({ formatted_response: 'ok', timings_ms: { llm_selection: 10, tool_retrieval: 1, api_execution: 4, response_formatting: 7 } }), true)
    expect(s.selection.status).toBe('ok')
    expect(s.selection.timeMs).toBe(11)
    expect(s.request.status).toBe('ok')
    expect(s.request.timeMs).toBe(4)
    expect(s.response.status).toBe('ok')
    expect(s.response.timeMs).toBe(3)
    expect(s.formatting.status).toBe('ok')
    expect(s.formatting.timeMs).toBe(7)
  })

  it('puts an llm_selection error on the first stage and marks the rest not reached', () => {
    const s = byKey(response({ status: 'error', selected_tool: null, http_spec: null, raw_response: null, error: 'the model refused', error_stage: 'llm_selection' }), true)
    expect(s.selection.status).toBe('error')
    expect(s.selection.error).toBe('llm_selection: the model refused')
    expect(s.request.status).toBe('not reached')
    expect(s.response.status).toBe('not reached')
    expect(s.formatting.status).toBe('not reached')
  })

  it('puts an api_execution error on the request stage', () => {
    const s = byKey(response({ status: 'error', raw_response: null, error: 'refused target', error_stage: 'api_execution' }))
    expect(s.selection.status).toBe('ok')
    expect(s.request.status).toBe('error')
    expect(s.request.error).toContain('refused target')
    expect(s.response.status).toBe('not reached')
  })

  it('shows an HTTP error status as a warning, not a failure', () => {
    const s = byKey(response({ raw_response: { status_code: 503, headers: {}, body: {}, execution_time_ms: 1 } }))
    expect(s.response.status).toBe('warning')
    expect(s.response.note).toContain('503')
  })

  it('explains a formatting that was not requested or that failed', () => {
    expect(byKey(response({})).formatting.status).toBe('skipped')
    const failed = byKey(response({ warnings: ['response formatting failed: timeout'] }), true).formatting
    expect(failed.status).toBe('warning')
    expect(failed.error).toContain('timeout')
  })
})
