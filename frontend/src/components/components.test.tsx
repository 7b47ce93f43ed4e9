import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '../api/client'
import type { PipelineResponse, RunEvent, RunEventType } from '../api/types'
import { ErrorBox } from './ErrorBox'
import { EventLog } from './EventLog'
import { ParamsForm } from './ParamsForm'
import { StagePanel } from './StagePanel'
import { ViolationList } from './ViolationList'

afterEach(cleanup)

describe('ErrorBox', () => {
  it('says what failed, where, and lists violations with their lines', () => {
    const error = new ApiError({
      status: 422, code: 'invalid_input', message: 'the request is invalid: params.date', where: 'POST /workflows/x/runs',
      violations: [{ path: 'params.date', message: 'required', line: 4 }], correlationId: 'abc123',
    })
    render(<ErrorBox error={error} title="The run did not start" />)
    const box = screen.getByRole('alert')
    expect(box.textContent).toContain('The run did not start: the request is invalid: params.date')
    expect(box.textContent).toContain('POST /workflows/x/runs → 422 (invalid_input)')
    expect(box.textContent).toContain('correlation id abc123')
    expect(box.textContent).toContain('params.date, line 4: required')
  })
})

describe('StagePanel', () => {
  it('renders each stage with its status and the masked request', () => {
    const r: PipelineResponse = {
      status: 'success', selected_tool: 'search_flights', arguments: { origin: 'AMS' },
      http_spec: { method: 'GET', url: 'http://h/flights', headers: { 'X-API-Key': '***' } },
      raw_response: { status_code: 200, headers: {}, body: [{ id: 'FL-1' }], execution_time_ms: 2 },
      formatted_response: null, error: null, error_stage: null, warnings: [], sql: null,
      timings_ms: { llm_selection: 5, total: 9 }, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, llm_calls: 1 },
    }
    render(<StagePanel response={r} formatRequested={false} />)
    expect(screen.getByTestId('stage-selection').dataset.stageStatus).toBe('ok')
    expect(screen.getByTestId('stage-request').textContent).toContain('"X-API-Key": "***"')
    expect(screen.getByTestId('stage-response').textContent).toContain('FL-1')
    expect(screen.getByTestId('stage-formatting').dataset.stageStatus).toBe('skipped')
  })
})

describe('ParamsForm', () => {
  const fields = [
    { name: 'origin', jsonType: 'string' as const, required: true, defaultValue: null, example: 'AMS', description: null, format: null, enum: null },
    { name: 'days', jsonType: 'integer' as const, required: false, defaultValue: 7, example: null, description: null, format: null, enum: null },
  ]
  it('refuses a missing required field and sends typed values', () => {
    const onSubmit = vi.fn()
    render(<ParamsForm fields={fields} submitLabel="Start" violationPrefix="params" onSubmit={onSubmit} testId="f" />)
    fireEvent.click(screen.getByRole('button', { name: 'Start' }))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByText('required')).toBeTruthy()
    fireEvent.change(screen.getByLabelText(/origin/), { target: { value: 'AMS' } })
    fireEvent.click(screen.getByRole('button', { name: 'Start' }))
    expect(onSubmit).toHaveBeenCalledWith({ origin: 'AMS', days: 7 })
  })
  it("shows the backend's violations under their field", () => {
    render(<ParamsForm fields={fields} submitLabel="Start" violationPrefix="params" onSubmit={() => {}} violations={[{ path: 'params.origin', message: 'must be 3 letters' }, { path: 'params', message: 'unknown: extra' }]} />)
    expect(screen.getByText('must be 3 letters')).toBeTruthy()
    expect(screen.getByText('params: unknown: extra')).toBeTruthy()
  })
})

describe('ViolationList', () => {
  it('jumps to the line of a violation', () => {
    const onJump = vi.fn()
    render(<ViolationList violations={[{ path: 'workflows.a.graph.s.call', message: 'unknown tool', line: 12, rule: 'unknown_tool' }]} onJump={onJump} />)
    fireEvent.click(screen.getByRole('button', { name: 'line 12' }))
    expect(onJump).toHaveBeenCalledWith(12)
  })
})

describe('EventLog', () => {
  const ev = (position: number, type: RunEventType, node_id?: string): RunEvent => ({ position, type, node_id, seq: position, at: '2026-01-01T00:00:00Z', run_id: 'r' }) as RunEvent
  const nodes = { a: { status: 'failed', kind: 'call', input: null, output: null, error: 'x', attempts: 1, started_at: null, ended_at: null, duration_ms: null, detail: {}, tool: 't' } } as const

  it('filters failed events and holds new ones while paused', () => {
    const events = [ev(1, 'run_started'), ev(2, 'node_started', 'a'), ev(3, 'node_failed', 'a')]
    const { rerender } = render(<EventLog events={events} nodes={nodes} live onSelectNode={() => {}} />)
    const list = () => screen.getByTestId('event-log').querySelector('ol') as HTMLElement
    expect(within(list()).getAllByRole('listitem')).toHaveLength(3)
    fireEvent.click(screen.getByRole('button', { name: 'failed' }))
    expect(within(list()).getAllByRole('listitem').map((r) => r.dataset.type)).toEqual(['node_failed'])
    fireEvent.click(screen.getByRole('button', { name: 'all' }))
    fireEvent.click(screen.getByTestId('pause-events'))
    rerender(<EventLog events={[...events, ev(4, 'run_failed')]} nodes={nodes} live onSelectNode={() => {}} />)
    expect(within(list()).getAllByRole('listitem')).toHaveLength(3)
    expect(screen.getByTestId('pause-events').textContent).toBe('Resume (1 new)')
    fireEvent.click(screen.getByTestId('pause-events'))
    expect(within(list()).getAllByRole('listitem')).toHaveLength(4)
  })

  it('filters by node and kind and opens an event to its payload', () => {
    const failed = { ...ev(3, 'node_failed', 'a'), error: 'HTTP 404', input: [{ id: 1 }, { id: 2 }] } as RunEvent
    const events = [ev(1, 'run_started'), ev(2, 'node_started', 'a'), failed]
    render(<EventLog events={events} nodes={nodes} live onSelectNode={() => {}} />)
    const items = () => within(screen.getByTestId('event-log').querySelector('ol') as HTMLElement).getAllByRole('listitem')
    fireEvent.change(screen.getByLabelText('Node filter'), { target: { value: 'a' } })
    expect(items().map((r) => r.dataset.type)).toEqual(['node_started', 'node_failed'])
    fireEvent.change(screen.getByLabelText('Kind filter'), { target: { value: 'node_failed' } })
    expect(items()).toHaveLength(1)
    fireEvent.click(within(items()[0]).getByTitle('show the payload'))
    const payload = screen.getByTestId('event-payload')
    expect(payload.textContent).toContain('HTTP 404')
    expect(payload.querySelectorAll('table tbody tr')).toHaveLength(2) // a list of objects: a table
  })
})
