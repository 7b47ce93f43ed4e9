// One node of a run: status, kind, attempts (n of max, last error, next retry), timings,
// input, output, error, detail, and its children (branches, items, sub-workflow steps).
import { useEffect, useRef } from 'react'
import type { RunNode } from '../api/types'
import { apiSaid, elapsedMs, formatClock, formatDuration } from '../lib/format'
import { href } from '../lib/router'
import { retryInfo } from '../lib/runInfo'
import { JsonBlock } from './JsonBlock'
import { StatusBadge } from './StatusBadge'

interface Props {
  nodeId: string
  node: RunNode | undefined
  childIds: string[]
  nodes: Record<string, RunNode>
  onSelect: (id: string) => void
  onClose: () => void
  now?: number
}

export function NodePanel({ nodeId, node, childIds, nodes, onSelect, onClose, now }: Props) {
  const panel = useRef<HTMLElement>(null)
  const opener = useRef<HTMLElement | null>(null)
  useEffect(() => {
    // opened (or another node chosen): remember what from, and read on from here
    const active = document.activeElement
    if (active instanceof HTMLElement && !panel.current?.contains(active)) opener.current = active
    panel.current?.focus()
  }, [nodeId])
  useEffect(() => {
    const here = panel.current
    return () => {
      // closed: focus goes back to what opened it (a graph node, a timeline row)
      const active = document.activeElement
      const lost = !active || active === document.body || here?.contains(active)
      if (lost && opener.current?.isConnected) opener.current.focus()
    }
  }, [])
  const retry = node ? retryInfo(node, now) : null
  const { last_error: _l, next_attempt: _n, next_attempt_at: _a, max_attempts: _m, delay_s: _d, api_message: _s, ...detail } = node?.detail ?? {}
  const said = node ? apiSaid(node.detail?.status_code, node.detail?.api_message) : null
  const active = node?.status === 'running' || node?.status === 'waiting_input'
  return (
    <aside
      ref={panel}
      className="node-panel"
      data-testid="node-panel"
      data-node={nodeId}
      tabIndex={-1}
      aria-label={`Node ${nodeId}`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose()
      }}
    >
      <div className="row spread">
        <h2><code>{nodeId}</code></h2>
        <button type="button" className="link" onClick={onClose} aria-label="Close node panel">✕</button>
      </div>
      {!node ? (
        <div className="muted">Not run (yet): no state recorded for this node.</div>
      ) : (
        <>
          <div className="row">
            <StatusBadge status={node.status} />
            <span className="muted">{node.kind ?? 'node'}</span>
          </div>
          <dl className="facts">
            <dt>attempts</dt>
            <dd data-testid="node-attempts">
              {retry?.max ? `attempt ${retry.attempt} of ${retry.max}` : node.attempts}
            </dd>
            {retry?.lastError && (<><dt>last error</dt><dd>{retry.lastError}</dd></>)}
            {retry?.nextAt && (
              <>
                <dt>next retry</dt>
                <dd data-testid="next-retry">attempt {retry.nextAttempt} at {formatClock(retry.nextAt)}</dd>
              </>
            )}
            <dt>started</dt><dd>{formatClock(node.started_at)}</dd>
            <dt>ended</dt><dd>{formatClock(node.ended_at)}</dd>
            <dt>duration</dt>
            <dd data-testid="node-duration">
              {node.duration_ms !== null ? formatDuration(node.duration_ms) : active && node.started_at ? `${formatDuration(elapsedMs(node.started_at, null, now))} so far` : '—'}
            </dd>
          </dl>
          {typeof node.detail?.reused_from === 'string' && (
            <div className="notice small" data-testid="node-reused">
              reused from run <a href={href('runs', node.detail.reused_from)}>{node.detail.reused_from.slice(0, 8)}</a>: not run again
            </div>
          )}
          {said && (
            <div className="api-said" data-testid="node-api-said">
              the API said <strong>{said}</strong>
            </div>
          )}
          {node.error && <div className="stage-error" data-testid="node-error">{node.error}</div>}
          <JsonBlock label="input" value={node.input} testId="node-input" />
          <JsonBlock label="output" value={node.output} testId="node-output" />
          {Object.keys(detail).length > 0 && <JsonBlock label="detail" value={detail} />}
        </>
      )}
      {childIds.length > 0 && (
        <div className="children">
          <div className="json-label">children</div>
          <ul>
            {childIds.map((id) => (
              <li key={id}>
                <button type="button" className="link" onClick={() => onSelect(id)}>{id.slice(nodeId.length + 1)}</button>{' '}
                <StatusBadge status={nodes[id]?.status ?? 'pending'} /> <span className="muted">{formatDuration(nodes[id]?.duration_ms)}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </aside>
  )
}
