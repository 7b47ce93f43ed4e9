// A time as the user reads it: their local date and time, how far from now, the ISO instant as
// its tooltip and machine-readable value.
import { formatTime } from '../lib/format'
import { relativeTime } from '../lib/triggers'

export function LocalTime({ iso, now, testId }: { iso: string | null | undefined; now: number; testId?: string }) {
  if (!iso) return <span className="muted">—</span>
  const relative = relativeTime(iso, now)
  return (
    <time dateTime={iso} title={iso} data-testid={testId}>
      {formatTime(iso)}
      {relative && <span className="muted"> · {relative}</span>}
    </time>
  )
}
