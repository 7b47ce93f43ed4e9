// Display helpers: durations, times, ids, JSON.

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—'
  if (ms < 1) return `${ms.toFixed(2)} ms`
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = ms / 1000
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`
  return `${Math.floor(m / 60)} h ${m % 60} min`
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return d.toLocaleString(undefined, {
    year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit',
  })
}

export function formatClock(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  const ms = String(d.getMilliseconds()).padStart(3, '0')
  return `${d.toLocaleTimeString(undefined, { hour12: false })}.${ms}`
}

export function shortId(id: string): string {
  return id.length > 12 ? id.slice(0, 8) : id
}

export function toJson(value: unknown): string {
  if (value === undefined) return ''
  if (typeof value === 'string') return value
  return JSON.stringify(value, null, 2)
}

export function elapsedMs(from: string | null | undefined, to?: string | null, now: number = Date.now()): number | null {
  if (!from) return null
  const start = new Date(from).getTime()
  const end = to ? new Date(to).getTime() : now
  return Number.isNaN(start) || Number.isNaN(end) ? null : end - start
}

/** What the API said about a failed call: ``HTTP 404 · no flight 'FL-9' (field flight_id)``. */
export function apiSaid(statusCode: unknown, apiMessage: unknown): string | null {
  if (typeof apiMessage !== 'string' || !apiMessage) return null
  return typeof statusCode === 'number' ? `HTTP ${statusCode} · ${apiMessage}` : apiMessage
}
