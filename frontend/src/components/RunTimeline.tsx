// A Gantt view of the run: one bar per node that started (children indented under their
// parallel / foreach / sub-workflow parent), from the run's start to its end (or now).
import type { RunDetail } from '../api/types'
import { formatDuration } from '../lib/format'
import { href } from '../lib/router'
import { reusedFrom } from '../lib/runInfo'
import { statusColor } from './StatusBadge'

export function RunTimeline({ run, onSelect, now = Date.now() }: { run: RunDetail; onSelect: (id: string) => void; now?: number }) {
  const origin = new Date(run.started_at ?? run.created_at ?? now).getTime()
  const end = run.finished_at ? new Date(run.finished_at).getTime() : now
  const rows = Object.entries(run.nodes)
    .filter(([, n]) => n.started_at)
    .map(([id, n]) => {
      const s = new Date(n.started_at as string).getTime()
      const e = n.ended_at ? new Date(n.ended_at).getTime() : end
      return { id, node: n, s, e }
    })
    .sort((a, b) => a.s - b.s || a.id.localeCompare(b.id))
  const untimed = Object.entries(run.nodes).filter(([, n]) => !n.started_at && !['skipped', 'pending', 'not_run'].includes(n.status))
  const span = Math.max(end, ...rows.map((r) => r.e)) - origin || 1
  if (rows.length === 0) return <div className="muted">nothing has started yet</div>
  return (
    <div className="timeline" data-testid="timeline">
      <div className="timeline-axis">
        <span>0</span>
        <span>{formatDuration(span / 2)}</span>
        <span>{formatDuration(span)}</span>
      </div>
      {rows.map(({ id, node, s, e }) => {
        const depth = id.split('/').length - 1
        const left = ((s - origin) / span) * 100
        const width = Math.max(((e - s) / span) * 100, 0.6)
        const from = reusedFrom(node)
        if (from) {
          // a redrive took its output from the earlier run: nothing ran, so no bar
          return (
            <div className="timeline-row timeline-reused" key={id} onClick={() => onSelect(id)} title={`${id}: reused from run ${from}`} data-testid={`timeline-reused-${id}`}>
              <div className="timeline-label" style={{ paddingLeft: depth * 12 }}>
                {depth ? id.split('/').slice(1).join('/') : id}
              </div>
              <div className="timeline-track timeline-reused-label">
                reused from <a href={href('runs', from)} onClick={(ev) => ev.stopPropagation()}>{from.slice(0, 8)}</a>
              </div>
              <div className="timeline-time muted">—</div>
            </div>
          )
        }
        return (
          <div className="timeline-row" key={id} onClick={() => onSelect(id)} title={`${id}: ${node.status}, ${formatDuration(e - s)}`}>
            <button type="button" className="link timeline-label" style={{ paddingLeft: depth * 12 }}>
              {depth ? id.split('/').slice(1).join('/') : id}
            </button>
            <div className="timeline-track">
              <div className="timeline-bar" style={{ left: `${left}%`, width: `${width}%`, background: statusColor(node.status) }} />
            </div>
            <div className="timeline-time muted">{formatDuration(e - s)}</div>
          </div>
        )
      })}
      {untimed.length > 0 && (
        <div className="muted small">
          no times recorded for: {untimed.map(([id, n]) => `${id} (${n.status})`).join(', ')}
        </div>
      )}
    </div>
  )
}
