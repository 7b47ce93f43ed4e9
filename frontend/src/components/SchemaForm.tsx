// A form generated from a JSON Schema (a tool config's, from GET /tools/_schema): one field per
// property, nested objects as sections, maps as JSON. The server's 422 violations show under
// the field they name until it is changed; client errors (bad JSON, a non-number) likewise.
import { useMemo, useState } from 'react'
import type { Violation } from '../api/client'
import { compact, fieldsOf, type FormField, fromText, type Schema, toText, violationsAt } from '../lib/schemaForm'

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
}

function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value)
}

function leaves(fields: FormField[], root: Schema): FormField[] {
  return fields.flatMap((f) => (f.kind === 'object' ? leaves(fieldsOf(f.schema, root, f.path), root) : [f]))
}

export function SchemaForm({ schema, initial, submitLabel, busy, violations = [], onSubmit, onCancel, testId, open = [] }: Props) {
  const top = useMemo(() => fieldsOf(schema, schema), [schema])
  const all = useMemo(() => leaves(top, schema), [top, schema])
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(all.map((f) => [f.path, toText(f, at(initial, f.path))])))
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [edited, setEdited] = useState<ReadonlySet<string>>(new Set())
  const set = (path: string, text: string) => {
    setTexts((t) => ({ ...t, [path]: text }))
    setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => k !== path)))
    setEdited((s) => new Set([...s, path]))
  }
  const shownViolations = violations.filter((v) => !edited.has(v.path ?? ''))

  const submit = () => {
    const value: Record<string, unknown> = {}
    const problems: Record<string, string> = {}
    for (const f of all) {
      const read = fromText(f, texts[f.path] ?? '')
      if (read.error) problems[f.path] = read.error
      if (read.value === undefined) continue
      const keys = f.path.split('.')
      let target = value
      for (const k of keys.slice(0, -1)) target = (target[k] ??= {}) as Record<string, unknown>
      target[keys[keys.length - 1]] = read.value
    }
    setErrors(problems)
    setEdited(new Set())
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
    const messages = [...(errors[f.path] ? [errors[f.path]] : []), ...violationsAt(shownViolations, f.path)]
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
  const elsewhere = shownViolations.filter((v) => !v.path || ![...placed].some((p) => v.path === p || v.path?.startsWith(`${p}.`)))
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
