// The run's event history, live: filter by outcome (all / failed / pending), by node and by
// kind; order; pause (new events are counted while the list stays still). Each event opens to
// its payload.
import { useState } from 'react'
import { eventFields, type RunEvent, type RunNode } from '../api/types'
import { formatClock } from '../lib/format'
import { eventSummary, isFailedEvent, isPendingEvent } from '../lib/runInfo'
import { JsonBlock } from './JsonBlock'

type Filter = 'all' | 'failed' | 'pending'

interface Props {
  events: RunEvent[]
  nodes: Record<string, RunNode>
  live: boolean
  onSelectNode: (id: string) => void
}

const ENVELOPE = new Set(['run_id', 'seq', 'position', 'type', 'at'])

/** What an event carries besides its envelope (id, type, time). */
export function eventPayload(e: RunEvent): Record<string, unknown> {
  return Object.fromEntries(Object.entries(e).filter(([k]) => !ENVELOPE.has(k)))
}

export function EventLog({ events, nodes, live, onSelectNode }: Props) {
  const [filter, setFilter] = useState<Filter>('all')
  const [node, setNode] = useState('')
  const [kind, setKind] = useState('')
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set())
  const [newestFirst, setNewestFirst] = useState(false)
  const [pausedAt, setPausedAt] = useState<number | null>(null)
  const visible = pausedAt === null ? events : events.slice(0, pausedAt)
  const nodeIds = [...new Set(events.map((e) => eventFields(e).node_id).filter((n): n is string => typeof n === 'string' && n !== ''))]
  const kinds = [...new Set(events.map((e) => e.type))]
  const filtered = visible.filter(
    (e) =>
      (filter === 'all' || (filter === 'failed' ? isFailedEvent(e) : isPendingEvent(e, nodes))) &&
      (!node || eventFields(e).node_id === node) &&
      (!kind || e.type === kind),
  )
  const ordered = newestFirst ? [...filtered].reverse() : filtered
  const held = pausedAt === null ? 0 : events.length - pausedAt
  const toggle = (position: number) =>
    setOpen((s) => {
      const next = new Set(s)
      if (next.has(position)) next.delete(position)
      else next.add(position)
      return next
    })

  return (
    <div className="event-log card" data-testid="event-log">
      <div className="row spread wrap">
        <h2>Events {live ? <span className="live-dot" title="live">● live</span> : <span className="muted">(ended)</span>}</h2>
        <div className="row wrap">
          <div className="segmented" role="group" aria-label="Event filter">
            {(['all', 'failed', 'pending'] as Filter[]).map((f) => (
              <button key={f} type="button" className={filter === f ? 'active' : ''} onClick={() => setFilter(f)}>{f}</button>
            ))}
          </div>
          <select aria-label="Node filter" value={node} onChange={(e) => setNode(e.target.value)}>
            <option value="">every node</option>
            {nodeIds.map((n) => (
              <option key={n} value={n}>{n}</option>
            ))}
          </select>
          <select aria-label="Kind filter" value={kind} onChange={(e) => setKind(e.target.value)}>
            <option value="">every kind</option>
            {kinds.map((k) => (
              <option key={k} value={k}>{k}</option>
            ))}
          </select>
          <button type="button" onClick={() => setNewestFirst(!newestFirst)}>{newestFirst ? 'newest first' : 'oldest first'}</button>
          {(live || pausedAt !== null) && ( // an ended log has nothing new to hold back; a held one can still resume
            <button type="button" onClick={() => setPausedAt(pausedAt === null ? events.length : null)} data-testid="pause-events">
              {pausedAt === null ? 'Pause' : `Resume${held ? ` (${held} new)` : ''}`}
            </button>
          )}
        </div>
      </div>
      <ol className="event-list">
        {ordered.map((e) => {
          const expanded = open.has(e.position)
          return (
            <li key={e.position} className={`event${isFailedEvent(e) ? ' event-failed' : ''}`} data-type={e.type} data-position={e.position}>
              <div className="event-line">
                <button type="button" className="link event-toggle" aria-expanded={expanded} onClick={() => toggle(e.position)} title="show the payload">
                  {expanded ? '▾' : '▸'} <span className="muted">{e.position}</span>
                </button>
                <span className="muted nowrap">{formatClock(e.at)}</span>
                <code className="event-type">{e.type}</code>
                {eventFields(e).node_id ? (
                  <button type="button" className="link" onClick={() => onSelectNode(eventFields(e).node_id as string)}>{eventFields(e).node_id}</button>
                ) : null}
                <span className="event-summary">{eventSummary(e)}</span>
              </div>
              {expanded && (
                <div className="event-payload" data-testid="event-payload">
                  {Object.entries(eventPayload(e)).map(([key, value]) => (
                    <JsonBlock key={key} label={key} value={value} />
                  ))}
                </div>
              )}
            </li>
          )
        })}
      </ol>
      {ordered.length === 0 && <div className="muted">no {filter === 'all' ? '' : `${filter} `}events{node ? ` of ${node}` : ''}{kind ? ` of kind ${kind}` : ''}</div>}
    </div>
  )
}
