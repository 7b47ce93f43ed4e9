// A labelled value: a list of objects as a table (with a JSON toggle), anything else as JSON.
import { useState } from 'react'
import { toJson } from '../lib/format'
import { asRows } from '../lib/table'
import { DataTable } from './DataTable'

export function JsonBlock({ label, value, testId }: { label?: string; value: unknown; testId?: string }) {
  const rows = asRows(value)
  const [asJson, setAsJson] = useState(false)
  const empty = value === null || value === undefined
  return (
    <div className="json-block" data-testid={testId}>
      {(label || rows) && (
        <div className="json-label row spread">
          <span>{label}{rows ? ` (${rows.length} rows)` : ''}</span>
          {rows && (
            <button type="button" className="link small" onClick={() => setAsJson(!asJson)} aria-pressed={asJson}>
              {asJson ? 'table' : 'JSON'}
            </button>
          )}
        </div>
      )}
      {empty ? <div className="muted">none</div> : rows && !asJson ? <DataTable rows={rows} /> : <pre tabIndex={0}>{toJson(value)}</pre>}
    </div>
  )
}
