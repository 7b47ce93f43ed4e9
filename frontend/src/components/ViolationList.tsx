// The validator's findings, each with its line (click to jump there), path and rule.
import type { Violation } from '../api/client'

export function ViolationList({ violations, onJump }: { violations: Violation[]; onJump: (line: number) => void }) {
  if (violations.length === 0) return null
  return (
    <ul className="violation-list" data-testid="violation-list">
      {violations.map((v, i) => (
        <li key={i} className={`violation-${v.severity ?? 'error'}`} data-line={v.line ?? ''}>
          {v.line ? (
            <button type="button" className="link" onClick={() => onJump(v.line as number)}>
              line {v.line}
            </button>
          ) : (
            <span className="muted">no line</span>
          )}{' '}
          <span className="severity">{v.severity ?? 'error'}</span> {v.path && <code>{v.path}</code>} {v.message}
          {v.rule && <span className="muted"> ({v.rule})</span>}
          {v.expected !== undefined && v.expected !== null && !(Array.isArray(v.expected) && v.expected.length === 0) && <span className="muted"> · expected {JSON.stringify(v.expected)}</span>}
        </li>
      ))}
    </ul>
  )
}
