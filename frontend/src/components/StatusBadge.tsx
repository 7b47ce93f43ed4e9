// The status words of runs and nodes, each with its colour (shared by badges, graph, legend).

export const STATUS_COLORS: Record<string, string> = {
  pending: '#9aa5b1',
  running: '#2f80ed',
  waiting_input: '#f2994a',
  succeeded: '#27ae60',
  failed: '#eb5757',
  skipped: '#c9ced6',
  cancelled: '#6c757d',
  not_run: '#e4e7eb',
}

export function statusColor(status: string | null | undefined): string {
  return STATUS_COLORS[status ?? 'not_run'] ?? '#9aa5b1'
}

/** A readable text colour for a status (the lightest swatches are not legible as text). */
export function statusTextColor(status: string | null | undefined): string {
  return status === 'skipped' || status === 'not_run' ? '#6b7280' : statusColor(status)
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
