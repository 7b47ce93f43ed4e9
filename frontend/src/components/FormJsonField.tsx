// One value edited two ways: as a form of rows, or as JSON text; edits in either show in the
// other. JSON that does not parse says why and leaves the form as it last was; the form view
// is refused while the JSON is not valid (or is something the form cannot show).
import { type ReactNode, useState } from 'react'
import { parseObject, type RowErrors } from '../lib/toolForm'

export interface FormJsonProps<R> {
  id: string
  label: string
  /** The value as JSON text (empty for none). */
  text: string
  /** The rows of a value; null when the form cannot show it. */
  toRows: (value: Record<string, unknown> | null) => R | null
  fromRows: (rows: R) => { value: Record<string, unknown> | null; errors: RowErrors }
  renderForm: (rows: R, setRows: (rows: R) => void, errors: RowErrors) => ReactNode
  /** The new value as JSON text, and what stops it from being saved (if anything). */
  onChange: (text: string, problem?: string) => void
  /** Why the form cannot show a value (shown with the refusal). */
  formOnly?: string
  /** The JSON text was edited (the rows say themselves which of them was). */
  onJsonEdit?: () => void
}

const show = (value: unknown) => (value === null ? '' : JSON.stringify(value, null, 2))

export function FormJsonField<R>({ id, label, text, toRows, fromRows, renderForm, onChange, formOnly, onJsonEdit }: FormJsonProps<R>) {
  const [start] = useState(() => {
    const parsed = parseObject(text)
    const rows = 'value' in parsed ? toRows(parsed.value) : null
    return { rows, json: text }
  })
  const [rows, setRowsState] = useState<R | null>(start.rows)
  const [mode, setMode] = useState<'form' | 'json'>(start.rows ? 'form' : 'json')
  const [json, setJson] = useState(start.json)
  const [jsonError, setJsonError] = useState<string | null>(null)
  const [refusal, setRefusal] = useState<string | null>(null)
  const errors = rows ? fromRows(rows).errors : {}

  const setRows = (next: R) => {
    setRowsState(next)
    setRefusal(null)
    const read = fromRows(next)
    const problems = Object.values(read.errors).flatMap((e) => Object.values(e))
    setJson(show(read.value))
    onChange(show(read.value), problems.length ? `${label}: ${problems[0]}` : undefined)
  }
  const typeJson = (next: string) => {
    onJsonEdit?.()
    setJson(next)
    setRefusal(null)
    const parsed = parseObject(next)
    if ('error' in parsed) {
      setJsonError(parsed.error)
      onChange(next, `${label}: ${parsed.error}`)
      return
    }
    setJsonError(null)
    const nextRows = toRows(parsed.value)
    if (nextRows) setRowsState(nextRows)
    onChange(next)
  }
  const toForm = () => {
    if (jsonError) return setRefusal(`The JSON is not valid (${jsonError}): fix it, or the form cannot show it.`)
    const parsed = parseObject(json)
    const nextRows = 'value' in parsed ? toRows(parsed.value) : null
    if (!nextRows) return setRefusal(formOnly ?? 'The form cannot show this value: edit it as JSON.')
    setRowsState(nextRows)
    setRefusal(null)
    setMode('form')
  }
  const toJson = () => {
    if (rows && Object.keys(errors).length > 0) return setRefusal('Some rows are not complete: fix them (or remove them) first.')
    if (rows) setJson(show(fromRows(rows).value))
    setRefusal(null)
    setMode('json')
  }

  return (
    <div className="form-json" data-testid={`${id}-editor`}>
      <div className="form-json-modes" role="group" aria-label={`${label}: edit as`}>
        <button type="button" aria-pressed={mode === 'form'} onClick={toForm} data-testid={`${id}-as-form`}>Form</button>
        <button type="button" aria-pressed={mode === 'json'} onClick={toJson} data-testid={`${id}-as-json`}>JSON</button>
      </div>
      {refusal && <div className="field-error" role="status" data-testid={`${id}-refusal`}>{refusal}</div>}
      {mode === 'form' && rows ? (
        renderForm(rows, setRows, errors)
      ) : (
        <>
          <textarea id={id} aria-label={`${label} as JSON`} rows={8} value={json} onChange={(e) => typeJson(e.target.value)} data-testid={`${id}-json`} />
          {jsonError && <div className="field-error" data-testid={`${id}-json-error`}>{jsonError}; the form keeps its last valid state</div>}
        </>
      )}
    </div>
  )
}
