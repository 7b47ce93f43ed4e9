// The status words of runs and nodes, each with its colour (shared by badges, graph, legend).

const STATUSES = ['pending', 'running', 'waiting_input', 'succeeded', 'failed', 'skipped', 'cancelled', 'not_run']

/** Each status's swatch: a CSS variable of the palette (styles.css), the same in both themes. */
export const STATUS_COLORS: Record<string, string> = Object.fromEntries(STATUSES.map((s) => [s, `var(--status-${s})`]))

export function statusColor(status: string | null | undefined): string {
  return STATUS_COLORS[status ?? 'not_run'] ?? STATUS_COLORS.pending
}

/** A status's colour as text on a card: mixed with the theme's text colour so it stays legible
 * (4.5:1) on the light and the dark card alike. */
export function statusTextColor(status: string | null | undefined): string {
  return `color-mix(in srgb, ${statusColor(status)} 55%, var(--fg))`
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge status-${status}`} style={{ background: statusColor(status) }} data-status={status}>
      {status.replace('_', ' ')}
    </span>
  )
}

export function StatusLegend({ statuses }: { statuses?: string[] }) {
  const shown = statuses ?? ['pending', 'running', 'waiting_input', 'succeeded', 'failed', 'skipped', 'not_run', 'cancelled']
  return (
    <div className="legend" data-testid="legend">
      {shown.map((s) => (
        <span key={s} className="legend-item">
          <span className="legend-swatch" style={{ background: statusColor(s) }} />
          {s.replace('_', ' ')}
        </span>
      ))}
    </div>
  )
}
