// Schedules and webhooks in words: relative times ("in 3 min"), what a schedule does and whether
// it fires, what started a run, and the sample body of a signed example read from its text.
import type { components } from '../api/schema'

export type ScheduleView = components['schemas']['ScheduleView']
export type TickView = components['schemas']['TickView']
export type WebhookView = components['schemas']['WebhookView']
export type DeliveryView = components['schemas']['DeliveryView']
export type WebhookExample = components['schemas']['WebhookExample']
export type RunTrigger = components['schemas']['RunTriggerView']

const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
]

/** `iso` from `now` in words: "in 3 min", "2 h ago", "now"; '' for a time that does not parse. */
export function relativeTime(iso: string | null | undefined, now: number): string {
  if (!iso) return ''
  const at = Date.parse(iso)
  if (Number.isNaN(at)) return ''
  const delta = at - now
  const size = Math.abs(delta)
  if (size < 1000) return 'now'
  const [unit, name] = UNITS.find(([u]) => size >= u) ?? UNITS[UNITS.length - 1]
  const count = Math.floor(size / unit) // whole units, rounded down
  const minutes = Math.floor((size % unit) / 60_000)
  const text = name === 'h' && count < 10 && minutes > 0 ? `${count} h ${minutes} min` : `${count} ${name}`
  return delta > 0 ? `in ${text}` : `${text} ago`
}

export type ScheduleState = 'firing' | 'paused' | 'disabled'

/** Whether a schedule fires: disabled in its document beats paused by someone. */
export function scheduleState(s: Pick<ScheduleView, 'enabled' | 'paused'>): ScheduleState {
  if (!s.enabled) return 'disabled'
  return s.paused ? 'paused' : 'firing'
}

/** When a schedule fires, in words: "cron 30 7 * * 1-5 (America/New_York)", "every 15m (UTC)". */
export function cadence(s: Pick<ScheduleView, 'cron' | 'every' | 'timezone'>): string {
  const when = s.cron !== null ? `cron ${s.cron}` : s.every !== null ? `every ${s.every}` : 'no cadence'
  return `${when} (${s.timezone})`
}

/** What started a run, in words: "schedule weekdays", "webhook reopened"; null for a person. */
export function triggerText(trigger: RunTrigger | null | undefined): string | null {
  if (!trigger) return null
  return `${trigger.kind} ${trigger.name}`
}

export type ParsedBody = { ok: true; value: unknown } | { ok: false; error: string }

/** The sample body as typed: JSON (blank is an empty object), or why it is not JSON. */
export function parseSampleBody(text: string): ParsedBody {
  if (!text.trim()) return { ok: true, value: {} }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (exc) {
    const reason = exc instanceof Error ? exc.message : String(exc)
    return { ok: false, error: `not JSON: ${reason}` }
  }
}

/** Whether a list of the workflow's schedules and webhooks holds none of either. */
export function noTriggers(schedules: unknown[] | undefined, webhooks: unknown[] | undefined): boolean {
  return (schedules?.length ?? 0) === 0 && (webhooks?.length ?? 0) === 0
}

/** A workflow's triggers counted: "1 schedule · 2 webhooks"; '' when it has none. */
export function triggersSummary(schedules: readonly string[], webhooks: readonly string[]): string {
  const count = (n: number, word: string) => (n ? `${n} ${word}${n === 1 ? '' : 's'}` : '')
  return [count(schedules.length, 'schedule'), count(webhooks.length, 'webhook')].filter(Boolean).join(' · ')
}

/** Whether a schedule's next fire time has passed (by over a second): its state is stale. */
export function due(schedules: readonly Pick<ScheduleView, 'next_fire_times'>[], now: number): boolean {
  return schedules.some((s) => {
    const next = s.next_fire_times[0]
    return next !== undefined && Date.parse(next) < now - 1000
  })
}
