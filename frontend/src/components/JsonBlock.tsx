// A labelled, scrollable JSON value.
import { toJson } from '../lib/format'

export function JsonBlock({ label, value, testId }: { label?: string; value: unknown; testId?: string }) {
  const empty = value === null || value === undefined
  return (
    <div className="json-block" data-testid={testId}>
      {label && <div className="json-label">{label}</div>}
      {empty ? <div className="muted">none</div> : <pre>{toJson(value)}</pre>}
    </div>
  )
}
