// A form generated from a JSON Schema (a tool config's, from GET /tools/_schema): one field per
// property, nested objects as sections, maps as JSON (or an editor of their own, `custom`).
// The server's 422 violations show under the field they name; editing a field says so
// (`onEdit`), and the owner of the violations drops those about it. Client errors (bad JSON, a
// non-number) show likewise.
import { type ReactNode, useMemo, useState } from 'react'
import type { Violation } from '../api/client'
import { compact, fieldsOf, type FormField, fromText, type Schema, toText, violationsAt } from '../lib/schemaForm'

/** What a field's own editor gets: its JSON text, violations, and whom to tell of changes. */
export interface CustomFieldProps {
  id: string
  path: string
  text: string
  /** The violations about the field (paths from the form's root). */
  violations: Violation[]
  /** The new text, and what stops it from being saved (if anything). */
  onChange: (text: string, problem?: string) => void
  /** A part of the field was edited: `path` as the server names it (`parameters.city.type`). */
  onEdit: (path: string) => void
}

export type CustomField = (props: CustomFieldProps) => ReactNode

interface Props {
  schema: Schema
  initial: Record<string, unknown>
  submitLabel: string
  busy?: boolean
  violations?: Violation[]
  onSubmit: (value: Record<string, unknown>) => void
  onCancel?: () => void
  testId?: string
  /** Sections shown open (others fold when empty). */
  open?: string[]
  /** A field was edited (its path): the violations about it are out of date. */
  onEdit?: (path: string) => void
  /** Editors of their own for some (JSON) fields, by path. */
  custom?: Record<string, CustomField>
}

function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value)
}

function leaves(fields: FormField[], root: Schema): FormField[] {
  return fields.flatMap((f) => (f.kind === 'object' ? leaves(fieldsOf(f.schema, root, f.path), root) : [f]))
}

export function SchemaForm({ schema, initial, submitLabel, busy, violations = [], onSubmit, onCancel, testId, open = [], onEdit, custom = {} }: Props) {
  const top = useMemo(() => fieldsOf(schema, schema), [schema])
  const all = useMemo(() => leaves(top, schema), [top, schema])
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(all.map((f) => [f.path, toText(f, at(initial, f.path))])))
  const [errors, setErrors] = useState<Record<string, string>>({})
  /** What stops a custom field's value from being saved, by path. */
  const [pending, setPending] = useState<Record<string, string>>({})
  const setText = (path: string, text: string) => {
    setTexts((t) => ({ ...t, [path]: text }))
    setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => k !== path)))
  }
  const set = (path: string, text: string) => {
    setText(path, text)
    onEdit?.(path)
  }

  const submit = () => {
    const value: Record<string, unknown> = {}
    const problems: Record<string, string> = {}
    for (const f of all) {
      if (pending[f.path]) problems[f.path] = pending[f.path]
      const read = fromText(f, texts[f.path] ?? '')
      if (read.error) problems[f.path] ??= read.error
      if (read.value === undefined) continue
      const keys = f.path.split('.')
      let target = value
      for (const k of keys.slice(0, -1)) target = (target[k] ??= {}) as Record<string, unknown>
      target[keys[keys.length - 1]] = read.value
    }
    setErrors(problems)
    if (Object.keys(problems).length === 0) onSubmit(compact(value) as Record<string, unknown>)
  }

  const renderField = (f: FormField): React.ReactNode => {
    if (f.kind === 'object') {
      const inner = fieldsOf(f.schema, schema, f.path)
      const filled = leaves(inner, schema).some((l) => (texts[l.path] ?? '') !== '')
      return (
        <details key={f.path} className="schema-section" open={f.required || filled || open.includes(f.path)} data-testid={`section-${f.path}`}>
          <summary>
            {f.name}
            {f.required && <span className="required">*</span>}
            {f.description && <span className="muted small"> — {f.description}</span>}
          </summary>
          {inner.map(renderField)}
        </details>
      )
    }
    const id = `${testId ?? 'schema'}-${f.path}`
    const text = texts[f.path] ?? ''
    const own = custom[f.path]
    if (own) {
      const changed = (next: string, problem?: string) => {
        setText(f.path, next)
        setPending((p) => ({ ...Object.fromEntries(Object.entries(p).filter(([k]) => k !== f.path)), ...(problem ? { [f.path]: problem } : {}) }))
      }
      return (
        <div className="field" key={f.path}>
          <div className="custom-field-name">{f.name}</div>
          {f.description && <div className="muted small">{f.description}</div>}
          {own({ id, path: f.path, text, violations: violations.filter((v) => violationsAt([v], f.path).length > 0), onChange: changed, onEdit: (p) => onEdit?.(p) })}
          {errors[f.path] && <div className="field-error">{errors[f.path]}</div>}
        </div>
      )
    }
    const messages = [...(errors[f.path] ? [errors[f.path]] : []), ...violationsAt(violations, f.path)]
    return (
      <div className="field" key={f.path}>
        <label htmlFor={id}>
          {f.name}
          {f.required && <span className="required">*</span>}
        </label>
        {f.kind === 'choice' ? (
          <select id={id} value={text} onChange={(e) => set(f.path, e.target.value)}>
            {(!f.required || f.nullable) && <option value="">—</option>}
            {f.options.map((o) => (
              <option key={o} value={o}>{o}</option>
            ))}
          </select>
        ) : f.kind === 'boolean' ? (
          <input id={id} type="checkbox" checked={text === 'true'} onChange={(e) => set(f.path, e.target.checked ? 'true' : '')} />
        ) : f.kind === 'longtext' || f.kind === 'json' ? (
          <textarea id={id} rows={f.kind === 'json' ? 4 : 2} value={text} placeholder={f.kind === 'json' ? '{ } as JSON' : undefined} onChange={(e) => set(f.path, e.target.value)} />
        ) : (
          <input id={id} type={f.kind === 'number' ? 'number' : 'text'} value={text} placeholder={f.kind === 'list' ? 'a, b, c' : undefined} onChange={(e) => set(f.path, e.target.value)} />
        )}
        {f.description && <div className="muted small">{f.description}</div>}
        {messages.map((m, i) => (
          <div className="field-error" key={i}>{m}</div>
        ))}
      </div>
    )
  }

  const placed = new Set(all.map((f) => f.path))
  const elsewhere = violations.filter((v) => !v.path || ![...placed].some((p) => v.path === p || v.path?.startsWith(`${p}.`)))
  return (
    <form
      className="schema-form params-form"
      data-testid={testId}
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
    >
      {top.map(renderField)}
      {elsewhere.length > 0 && (
        <ul className="violations">
          {elsewhere.map((v, i) => (
            <li key={i}>{v.path ? `${v.path}: ` : ''}{v.message}</li>
          ))}
        </ul>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>{busy ? 'Saving…' : submitLabel}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  )
}
