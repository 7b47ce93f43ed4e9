import { describe, expect, it } from 'vitest'
import type { RunDetail, RunEvent, RunNode, RunEventType } from '../api/types'
import { eventSummary, failureSummary, isFailedEvent, isPendingEvent, retryInfo, reusedFrom } from './runInfo'

const node = (over: Partial<RunNode>): RunNode => ({
  status: 'succeeded', kind: 'call', input: null, output: null, error: null, attempts: 1,
  started_at: null, ended_at: null, duration_ms: null, detail: {}, tool: null, ...over,
})

describe('retryInfo', () => {
  it('shows attempt n of max and the next retry while it is ahead', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    const waiting = node({ status: 'running', attempts: 2, detail: { max_attempts: 3, last_error: 'HTTP 503', next_attempt: 2, next_attempt_at: '2026-01-01T00:00:05Z' } })
    expect(retryInfo(waiting, now)).toEqual({ attempt: 1, max: 3, lastError: 'HTTP 503', nextAttempt: 2, nextAt: '2026-01-01T00:00:05Z' })
    const done = node({ status: 'failed', attempts: 3, detail: { max_attempts: 3, next_attempt: 3, next_attempt_at: '2026-01-01T00:00:05Z' } })
    expect(retryInfo(done, now)).toMatchObject({ attempt: 3, max: 3, nextAt: null })
    expect(retryInfo(node({}), now)).toBeNull()
  })
})

describe('failureSummary', () => {
  const run = {
    status: 'failed', error: { message: 'Booking failed after retries', node_id: 'fail_booking' },
    nodes: {
      reserve: node({ status: 'failed', error: 'HTTP 503', ended_at: '2026-01-01T00:00:01Z' }),
      fail_booking: node({ status: 'failed', error: 'Booking failed after retries', ended_at: '2026-01-01T00:00:02Z' }),
    },
  } as unknown as RunDetail

  it('points at the node named by the error and at the first failure', () => {
    const s = failureSummary(run)!
    expect(s.nodeId).toBe('fail_booking')
    expect(s.message).toBe('Booking failed after retries')
    expect(s.rootCause).toEqual({ nodeId: 'reserve', error: 'HTTP 503' })
  })

  it('says nothing for a run that did not fail', () => {
    expect(failureSummary({ ...run, status: 'succeeded', error: null } as RunDetail)).toBeNull()
  })
})

describe('event classes', () => {
  const ev = (type: RunEventType, extra: Partial<RunEvent> = {}): RunEvent => ({ type, position: 1, seq: 1, at: '', run_id: 'r', ...extra }) as RunEvent
  it('tells failed and pending events apart', () => {
    const nodes = { ask: node({ status: 'waiting_input' }), done: node({}) }
    expect(isFailedEvent(ev('attempt_failed'))).toBe(true)
    expect(isFailedEvent(ev('node_succeeded'))).toBe(false)
    expect(isPendingEvent(ev('waiting_input', { node_id: 'ask' }), nodes)).toBe(true)
    expect(isPendingEvent(ev('node_started', { node_id: 'done' }), nodes)).toBe(false)
  })
  it('summarises an event', () => {
    expect(eventSummary(ev('retry_scheduled', { attempt: 2, max_attempts: 3 }))).toContain('attempt 2 of 3')
    expect(eventSummary(ev('node_failed', { error: 'HTTP 503', fallback: 'fb' }))).toBe('HTTP 503 · fallback → fb')
  })
  it('says a redrive reused a node, and from which run', () => {
    expect(eventSummary(ev('node_succeeded', { node_id: 'search', reused_from: '0123456789abcdef' } as Partial<RunEvent>))).toBe('reused from run 01234567 (not run again)')
    expect(reusedFrom(node({ detail: { reused_from: 'r1' } }))).toBe('r1')
    expect(reusedFrom(node({}))).toBeNull()
    expect(reusedFrom(undefined)).toBeNull()
  })
})
