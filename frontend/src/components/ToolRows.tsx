// The rows of a tool form: its parameters (name, in, type, required, enum, format, description,
// example) and its output schema's properties (name, type, required, description). Each row
// can move up or down or go; the server's violations about a row show under it, and editing a
// column says so (`onEdit`, with the path the server would name) so they can go.
import type { ReactNode } from 'react'
import type { Violation } from '../api/client'
import { violationsAt } from '../lib/schemaForm'
import { LOCATIONS, newParamRow, newPropertyRow, nestedKeys, type ParamRow, type PropertyRow, type RowErrors, TYPES } from '../lib/toolForm'

interface RowsProps<R> {
  id: string
  rows: R[]
  setRows: (rows: R[]) => void
  errors: RowErrors
  /** The server's violations, paths from the tool's root (`parameters.city.type`). */
  violations: Violation[]
  onEdit: (path: string) => void
}

function moved<R>(rows: R[], i: number, by: number): R[] {
  const j = i + by
  if (j < 0 || j >= rows.length) return rows
  const next = [...rows]
  ;[next[i], next[j]] = [next[j], next[i]]
  return next
}

function RowMoves({ label, index, count, move, remove }: { label: string; index: number; count: number; move: (by: number) => void; remove: () => void }) {
  return (
    <div className="row-moves">
      <button type="button" onClick={() => move(-1)} disabled={index === 0} aria-label={`Move ${label} up`}>↑</button>
      <button type="button" onClick={() => move(1)} disabled={index === count - 1} aria-label={`Move ${label} down`}>↓</button>
      <button type="button" className="danger" onClick={remove} aria-label={`Remove ${label}`}>Remove</button>
    </div>
  )
}

function Cell({ label, error, wide, children }: { label: string; error?: string; wide?: boolean; children: ReactNode }) {
  return (
    <div className={`row-cell${wide ? ' wide-cell' : ''}`}>
      <label>
        <span className="muted small">{label}</span>
        {children}
      </label>
      {error && <span className="field-error">{error}</span>}
    </div>
  )
}

function Messages({ messages }: { messages: string[] }) {
  if (messages.length === 0) return null
  return (
    <ul className="row-violations">
      {messages.map((m, i) => <li key={i} className="field-error">{m}</li>)}
    </ul>
  )
}

/** A violation's message, with the column it names when it names one below the row. */
function rowMessages(violations: Violation[], at: string): string[] {
  return violations
    .filter((v) => violationsAt([v], at).length > 0)
    .map((v) => (v.path && v.path !== at ? `${v.path.slice(at.length + 1)}: ${v.message}` : v.message))
}

function TypeSelect({ value, onChange, label }: { value: string; onChange: (v: string) => void; label: string }) {
  return (
    <select value={value} onChange={(e) => onChange(e.target.value)} aria-label={label}>
      <option value="">any</option>
      {TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
    </select>
  )
}

export function ParameterRows({ id, rows, setRows, errors, violations, onEdit }: RowsProps<ParamRow>) {
  const change = (i: number, column: string, patch: Partial<ParamRow>) => {
    const name = rows[i].name.trim()
    onEdit(column === 'name' ? `parameters.${name}` : `parameters.${name}.${column}`)
    setRows(rows.map((r, k) => (k === i ? { ...r, ...patch } : r)))
  }
  const edited = (i: number) => onEdit(`parameters.${rows[i].name.trim()}`)
  return (
    <div className="tool-rows" data-testid={`${id}-rows`}>
      {rows.length === 0 && <div className="muted">no parameters</div>}
      {rows.map((r, i) => {
        const label = r.name.trim() ? `parameter ${r.name.trim()}` : `parameter ${i + 1}`
        const e = errors[r.key] ?? {}
        return (
          <fieldset key={r.key} className="tool-row" data-testid={`${id}-row-${i}`}>
            <legend>{label}</legend>
            <div className="row-cells">
              <Cell label="name" error={e.name}>
                <input type="text" value={r.name} onChange={(ev) => change(i, 'name', { name: ev.target.value })} />
              </Cell>
              <Cell label="in">
                <select value={r.location} onChange={(ev) => change(i, 'in', { location: ev.target.value, ...(ev.target.value === 'path' ? { required: true } : {}) })}>
                  {LOCATIONS.map((l) => <option key={l} value={l}>{l}</option>)}
                </select>
              </Cell>
              <Cell label="type">
                <TypeSelect label={`${label} type`} value={r.type} onChange={(v) => change(i, 'type', { type: v as ParamRow['type'] })} />
              </Cell>
              <Cell label="required">
                <input type="checkbox" checked={r.required} onChange={(ev) => change(i, 'required', { required: ev.target.checked })} />
              </Cell>
              <Cell label="enum (a, b, c)" error={e.enum}>
                {r.enumInJson ? (
                  <span className="muted small">set in the JSON view</span>
                ) : (
                  <input type="text" value={r.enumText} onChange={(ev) => change(i, 'enum', { enumText: ev.target.value })} />
                )}
              </Cell>
              <Cell label="format">
                <input type="text" value={r.format} placeholder="date, email, …" onChange={(ev) => change(i, 'format', { format: ev.target.value })} />
              </Cell>
              <Cell label="description" wide>
                <input type="text" value={r.description} onChange={(ev) => change(i, 'description', { description: ev.target.value })} />
              </Cell>
              <Cell label="example" error={e.example}>
                <input type="text" value={r.example} onChange={(ev) => change(i, 'example', { example: ev.target.value })} />
              </Cell>
            </div>
            {Object.keys(r.extra).length > 0 && <div className="muted small">also: {Object.keys(r.extra).join(', ')} (edit in the JSON view)</div>}
            <Messages messages={r.name.trim() ? rowMessages(violations, `parameters.${r.name.trim()}`) : []} />
            <RowMoves label={label} index={i} count={rows.length} move={(by) => { edited(i); setRows(moved(rows, i, by)) }} remove={() => { edited(i); setRows(rows.filter((_, k) => k !== i)) }} />
          </fieldset>
        )
      })}
      <button type="button" onClick={() => setRows([...rows, newParamRow()])} data-testid={`${id}-add`}>Add parameter</button>
    </div>
  )
}

export function PropertyRows({ id, rows, setRows, errors, violations, onEdit }: RowsProps<PropertyRow>) {
  const change = (i: number, patch: Partial<PropertyRow>) => {
    onEdit('output_schema')
    setRows(rows.map((r, k) => (k === i ? { ...r, ...patch } : r)))
  }
  return (
    <div className="tool-rows" data-testid={`${id}-rows`}>
      {rows.length === 0 && <div className="muted">no output schema</div>}
      {rows.map((r, i) => {
        const label = r.name.trim() ? `property ${r.name.trim()}` : `property ${i + 1}`
        const nested = nestedKeys(r)
        return (
          <fieldset key={r.key} className="tool-row" data-testid={`${id}-row-${i}`}>
            <legend>{label}</legend>
            <div className="row-cells">
              <Cell label="name" error={errors[r.key]?.name}>
                <input type="text" value={r.name} onChange={(ev) => change(i, { name: ev.target.value })} />
              </Cell>
              <Cell label="type">
                <TypeSelect label={`${label} type`} value={r.type} onChange={(v) => change(i, { type: v as PropertyRow['type'] })} />
              </Cell>
              <Cell label="required">
                <input type="checkbox" checked={r.required} onChange={(ev) => change(i, { required: ev.target.checked })} />
              </Cell>
              <Cell label="description" wide>
                <input type="text" value={r.description} onChange={(ev) => change(i, { description: ev.target.value })} />
              </Cell>
            </div>
            {nested.length > 0 && <div className="muted small">nested: {nested.join(', ')} — edit these in the JSON view</div>}
            <RowMoves label={label} index={i} count={rows.length} move={(by) => { onEdit('output_schema'); setRows(moved(rows, i, by)) }} remove={() => { onEdit('output_schema'); setRows(rows.filter((_, k) => k !== i)) }} />
          </fieldset>
        )
      })}
      <Messages messages={violationsAt(violations, 'output_schema')} />
      <button type="button" onClick={() => setRows([...rows, newPropertyRow()])} data-testid={`${id}-add`}>Add property</button>
    </div>
  )
}
