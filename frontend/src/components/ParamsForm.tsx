// A form generated from fields (a workflow's params or a yield's expects). Client-side type
// errors and the backend's 422 violations (`<prefix>.<name>`) are shown under their field
// until that field is changed (a fixed field shows no stale error). Offered choices are
// picked from a table.
import { useState } from 'react'
import type { Violation } from '../api/client'
import { collectValues, textOf, type Field } from '../lib/fields'
import { type Scope, useCan } from '../lib/session'
import { ScopedButton } from './Access'
import { OptionPicker } from './OptionPicker'

interface Props {
  fields: Field[]
  submitLabel: string
  busy?: boolean
  violations?: Violation[]
  violationPrefix: string
  onSubmit: (values: Record<string, unknown>) => void
  extra?: React.ReactNode
  testId?: string
  /** The scope submitting needs: refused, the button says why and nothing is sent. */
  scope?: Scope
  /** Whose data submitting acts on (a run's owner). */
  owner?: string | null
  /** Values to start from (a run's params) instead of the fields' defaults. */
  initial?: Record<string, unknown>
  /** Told the typed values (those that parse) after each change. */
  onValues?: (values: Record<string, unknown>) => void
}

function placeholder(f: Field): string {
  if (f.example !== null && f.example !== undefined) return `e.g. ${typeof f.example === 'string' ? f.example : JSON.stringify(f.example)}`
  if (f.jsonType === 'array') return '[ ... ] as JSON'
  if (f.jsonType === 'object') return '{ ... } as JSON'
  return f.jsonType
}

export function ParamsForm({ fields, submitLabel, busy, violations = [], violationPrefix, onSubmit, extra, testId, scope, owner, initial, onValues }: Props) {
  const permit = useCan(scope, owner)
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(fields.map((f) => [f.name, textOf(f, initial?.[f.name])])))
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [edited, setEdited] = useState<ReadonlySet<string>>(new Set())
  const set = (name: string, value: string) => {
    const next = { ...texts, [name]: value }
    setTexts(next)
    onValues?.(collectValues(fields, next).values)
    setErrors((e) => (name in e ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== name)) : e))
    setEdited((s) => (s.has(name) ? s : new Set([...s, name])))
  }
  const serverError = (name: string) =>
    edited.has(name)
      ? []
      : violations.filter((v) => v.path === `${violationPrefix}.${name}` || v.path?.startsWith(`${violationPrefix}.${name}.`)).map((v) => v.message)
  const other = violations.filter((v) => !fields.some((f) => v.path === `${violationPrefix}.${f.name}` || v.path?.startsWith(`${violationPrefix}.${f.name}.`)))

  return (
    <form
      className="params-form"
      data-testid={testId}
      onSubmit={(e) => {
        e.preventDefault()
        if (!permit.allowed) return
        const { values, errors } = collectValues(fields, texts)
        setErrors(errors)
        setEdited(new Set())
        if (Object.keys(errors).length === 0) onSubmit(values)
      }}
    >
      {fields.length === 0 && <div className="muted">no parameters</div>}
      {fields.map((f) => {
        const id = `${testId ?? 'field'}-${f.name}`
        const messages = [...(errors[f.name] ? [errors[f.name]] : []), ...serverError(f.name)]
        return (
          <div className="field" key={f.name}>
            <label htmlFor={f.options ? undefined : id}>
              {f.name}
              {f.required && <span className="required">*</span>} <span className="muted">{f.jsonType}{f.format ? ` (${f.format})` : ''}</span>
            </label>
            {f.options ? (
              <OptionPicker id={id} name={f.name} options={f.options} value={texts[f.name]} onChange={(v) => set(f.name, v)} />
            ) : f.enum ? (
              <select id={id} name={f.name} value={texts[f.name]} onChange={(e) => set(f.name, e.target.value)}>
                <option value="">—</option>
                {f.enum.map((v) => (
                  <option key={String(v)} value={String(v)}>{String(v)}</option>
                ))}
              </select>
            ) : f.jsonType === 'boolean' ? (
              <input id={id} name={f.name} type="checkbox" checked={texts[f.name] === 'true'} onChange={(e) => set(f.name, String(e.target.checked))} />
            ) : f.jsonType === 'array' || f.jsonType === 'object' ? (
              <textarea id={id} name={f.name} rows={2} value={texts[f.name]} placeholder={placeholder(f)} onChange={(e) => set(f.name, e.target.value)} />
            ) : (
              <input
                id={id}
                name={f.name}
                type={f.format === 'date' ? 'date' : f.jsonType === 'integer' || f.jsonType === 'number' ? 'number' : 'text'}
                step={f.jsonType === 'number' ? 'any' : undefined}
                value={texts[f.name]}
                placeholder={placeholder(f)}
                onChange={(e) => set(f.name, e.target.value)}
              />
            )}
            {f.description && <div className="muted small">{f.description}</div>}
            {messages.map((m, i) => (
              <div className="field-error" key={i}>{m}</div>
            ))}
          </div>
        )
      })}
      {other.length > 0 && (
        <ul className="violations">
          {other.map((v, i) => (
            <li key={i}>{v.path ? `${v.path}: ` : ''}{v.message}</li>
          ))}
        </ul>
      )}
      <div className="row">
        {scope ? (
          <ScopedButton scope={scope} owner={owner} showReason type="submit" className="primary" disabled={busy}>{busy ? 'Working…' : submitLabel}</ScopedButton>
        ) : (
          <button type="submit" className="primary" disabled={busy}>{busy ? 'Working…' : submitLabel}</button>
        )}
        {extra}
      </div>
    </form>
  )
}
