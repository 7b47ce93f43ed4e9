// The run's event history, live: filter (all / failed / pending), order, pause. While paused,
// new events are counted but the list stays still.
import { useState } from 'react'
import type { RunEvent, RunNode } from '../api/types'
import { formatClock } from '../lib/format'
import { eventSummary, isFailedEvent, isPendingEvent } from '../lib/runInfo'

type Filter = 'all' | 'failed' | 'pending'

interface Props {
  events: RunEvent[]
  nodes: Record<string, RunNode>
  live: boolean
  onSelectNode: (id: string) => void
}

export function EventLog({ events, nodes, live, onSelectNode }: Props) {
  const [filter, setFilter] = useState<Filter>('all')
  const [newestFirst, setNewestFirst] = useState(false)
  const [pausedAt, setPausedAt] = useState<number | null>(null)
  const visible = pausedAt === null ? events : events.slice(0, pausedAt)
  const filtered = visible.filter((e) => filter === 'all' || (filter === 'failed' ? isFailedEvent(e) : isPendingEvent(e, nodes)))
  const ordered = newestFirst ? [...filtered].reverse() : filtered
  const held = pausedAt === null ? 0 : events.length - pausedAt

  return (
    <div className="event-log card" data-testid="event-log">
      <div className="row spread">
        <h3>Events {live ? <span className="live-dot" title="live">● live</span> : <span className="muted">(ended)</span>}</h3>
        <div className="row">
          <div className="segmented" role="group" aria-label="Event filter">
            {(['all', 'failed', 'pending'] as Filter[]).map((f) => (
              <button key={f} type="button" className={filter === f ? 'active' : ''} onClick={() => setFilter(f)}>{f}</button>
            ))}
          </div>
          <button type="button" onClick={() => setNewestFirst(!newestFirst)}>{newestFirst ? 'newest first' : 'oldest first'}</button>
          <button type="button" onClick={() => setPausedAt(pausedAt === null ? events.length : null)} data-testid="pause-events">
            {pausedAt === null ? 'Pause' : `Resume${held ? ` (${held} new)` : ''}`}
          </button>
        </div>
      </div>
      <table className="events-table">
        <tbody>
          {ordered.map((e) => (
            <tr key={e.position} className={isFailedEvent(e) ? 'event-failed' : ''} data-type={e.type}>
              <td className="muted">{e.position}</td>
              <td className="muted nowrap">{formatClock(e.at)}</td>
              <td className="nowrap"><code>{e.type}</code></td>
              <td className="nowrap">
                {e.node_id ? <button type="button" className="link" onClick={() => onSelectNode(e.node_id as string)}>{e.node_id}</button> : ''}
              </td>
              <td className="event-summary">{eventSummary(e)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {ordered.length === 0 && <div className="muted">no {filter === 'all' ? '' : `${filter} `}events</div>}
    </div>
  )
}
