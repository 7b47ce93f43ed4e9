import { describe, expect, it } from 'vitest'
import { cadence, due, noTriggers, parseSampleBody, relativeTime, scheduleState, triggersSummary, triggerText } from './triggers'

const NOW = Date.parse('2026-11-27T09:00:00Z')

describe('relativeTime', () => {
  it('says how far ahead or back a time is, in whole units', () => {
    expect(relativeTime('2026-11-27T09:03:00Z', NOW)).toBe('in 3 min')
    expect(relativeTime('2026-11-27T09:03:59Z', NOW)).toBe('in 3 min')
    expect(relativeTime('2026-11-27T08:59:30Z', NOW)).toBe('30 s ago')
    expect(relativeTime('2026-11-27T10:30:00Z', NOW)).toBe('in 1 h 30 min')
    expect(relativeTime('2026-11-27T11:00:00Z', NOW)).toBe('in 2 h')
    expect(relativeTime('2026-11-27T21:10:00Z', NOW)).toBe('in 12 h')
    expect(relativeTime('2026-11-30T09:00:00Z', NOW)).toBe('in 3 d')
    expect(relativeTime('2026-11-27T09:00:00.400Z', NOW)).toBe('now')
  })

  it('says nothing of a missing or unreadable time', () => {
    expect(relativeTime(null, NOW)).toBe('')
    expect(relativeTime('next tuesday', NOW)).toBe('')
  })

  it('reads offsets other than UTC', () => {
    expect(relativeTime('2026-11-27T04:05:00-05:00', NOW)).toBe('in 5 min')
  })
})

describe('scheduleState', () => {
  it('puts the document before a pause', () => {
    expect(scheduleState({ enabled: true, paused: false })).toBe('firing')
    expect(scheduleState({ enabled: true, paused: true })).toBe('paused')
    expect(scheduleState({ enabled: false, paused: true })).toBe('disabled')
  })
})

describe('cadence', () => {
  it('names the cron or the interval with the zone', () => {
    expect(cadence({ cron: '30 7 * * 1-5', every: null, timezone: 'America/New_York' })).toBe('cron 30 7 * * 1-5 (America/New_York)')
    expect(cadence({ cron: null, every: '15m', timezone: 'UTC' })).toBe('every 15m (UTC)')
  })
})

describe('triggerText', () => {
  it('names the kind and the trigger, and nothing for a run a person started', () => {
    expect(triggerText({ kind: 'webhook', name: 'reopened', time: null })).toBe('webhook reopened')
    expect(triggerText(null)).toBeNull()
  })
})

describe('parseSampleBody', () => {
  it('reads JSON, a blank body as an empty object, and says why other text is refused', () => {
    expect(parseSampleBody('{"a": [1, 2]}')).toEqual({ ok: true, value: { a: [1, 2] } })
    expect(parseSampleBody('  ')).toEqual({ ok: true, value: {} })
    expect(parseSampleBody('"text"')).toEqual({ ok: true, value: 'text' })
    const bad = parseSampleBody('{a: 1}')
    expect(bad.ok).toBe(false)
    if (!bad.ok) expect(bad.error).toMatch(/^not JSON: /)
  })
})

describe('noTriggers', () => {
  it('is true only when both lists are empty or not loaded', () => {
    expect(noTriggers([], [])).toBe(true)
    expect(noTriggers(undefined, [])).toBe(true)
    expect(noTriggers([{}], [])).toBe(false)
  })
})

describe('triggersSummary', () => {
  it('counts schedules and webhooks, each word in the singular or plural', () => {
    expect(triggersSummary(['weekdays'], ['a', 'b'])).toBe('1 schedule · 2 webhooks')
    expect(triggersSummary([], ['a'])).toBe('1 webhook')
    expect(triggersSummary([], [])).toBe('')
  })
})

describe('due', () => {
  it('is true once a next fire time is over a second past', () => {
    const at = (iso: string) => ({ next_fire_times: [iso, '2026-11-27T10:00:00Z'] })
    expect(due([at('2026-11-27T08:59:58Z')], NOW)).toBe(true)
    expect(due([at('2026-11-27T08:59:59.500Z')], NOW)).toBe(false)
    expect(due([{ next_fire_times: [] }, at('2026-11-27T09:05:00Z')], NOW)).toBe(false)
  })
})
