// Reading a JSON Schema (as pydantic writes it) for a generated form: what each property is,
// how a value is shown in a field and read back, and which server violations belong to it.
import type { Violation } from '../api/client'

export type Schema = Record<string, unknown>

export type FieldKind = 'text' | 'longtext' | 'number' | 'boolean' | 'choice' | 'list' | 'object' | 'json'

export interface FormField {
  name: string
  path: string
  kind: FieldKind
  title: string
  description: string | null
  required: boolean
  nullable: boolean
  options: string[]
  schema: Schema
}

const LONG = /description|document|schema_sdl|hint/i

/** ``$ref`` resolved against the root's ``$defs``; ``anyOf [X, null]`` as X, nullable. */
export function resolve(schema: Schema, root: Schema): { schema: Schema; nullable: boolean } {
  let current = schema
  let nullable = false
  for (let i = 0; i < 8; i += 1) {
    const ref = current.$ref
    if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
      const defs = (root.$defs ?? {}) as Record<string, Schema>
      current = { ...defs[ref.slice('#/$defs/'.length)], ...Object.fromEntries(Object.entries(current).filter(([k]) => k !== '$ref')) }
      continue
    }
    const anyOf = current.anyOf as Schema[] | undefined
    if (Array.isArray(anyOf)) {
      const others = anyOf.filter((s) => s.type !== 'null')
      nullable = nullable || others.length < anyOf.length
      if (others.length === 1) {
        current = { ...others[0], description: current.description ?? others[0].description, title: current.title ?? others[0].title }
        continue
      }
    }
    break
  }
  return { schema: current, nullable }
}

/** The fields of an object schema, in its order, at ``prefix``. */
export function fieldsOf(schema: Schema, root: Schema, prefix = ''): FormField[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const required = new Set((schema.required ?? []) as string[])
  return Object.entries(properties).map(([name, raw]) => {
    const { schema: s, nullable } = resolve(raw, root)
    const path = prefix ? `${prefix}.${name}` : name
    let kind: FieldKind = 'json'
    if (Array.isArray(s.enum)) kind = 'choice'
    else if (s.type === 'string') kind = LONG.test(name) ? 'longtext' : 'text'
    else if (s.type === 'integer' || s.type === 'number') kind = 'number'
    else if (s.type === 'boolean') kind = nullable ? 'choice' : 'boolean'
    else if (s.type === 'array' && (s.items as Schema | undefined)?.type === 'string') kind = 'list'
    else if (s.type === 'object' && s.properties && !s.additionalProperties) kind = 'object'
    const options = Array.isArray(s.enum) ? (s.enum as unknown[]).map(String) : kind === 'choice' ? ['true', 'false'] : []
    return {
      name,
      path,
      kind,
      title: name,
      description: typeof s.description === 'string' ? s.description.split('\n')[0] : null,
      required: required.has(name),
      nullable,
      options,
      schema: s,
    }
  })
}

/** The text a field shows for a value. */
export function toText(field: FormField, value: unknown): string {
  if (value === undefined || value === null) return ''
  if (field.kind === 'list') return Array.isArray(value) ? value.join(', ') : ''
  if (field.kind === 'json') return JSON.stringify(value, null, 2)
  return String(value)
}

/** The value a field's text stands for; ``undefined`` leaves the property out. */
export function fromText(field: FormField, text: string): { value?: unknown; error?: string } {
  const t = text.trim()
  if (t === '') return { value: undefined }
  switch (field.kind) {
    case 'number': {
      const n = Number(t)
      return Number.isFinite(n) ? { value: n } : { error: 'not a number' }
    }
    case 'list':
      return { value: t.split(',').map((p) => p.trim()).filter(Boolean) }
    case 'choice':
      return field.schema.type === 'boolean' ? { value: t === 'true' } : { value: t }
    case 'json':
      try {
        return { value: JSON.parse(t) }
      } catch {
        return { error: 'not valid JSON (an object like {"a": 1})' }
      }
    default:
      return { value: text }
  }
}

/** The server's violations about ``path`` (the field, or inside it). */
export function violationsAt(violations: Violation[], path: string): string[] {
  return violations.filter((v) => v.path === path || v.path?.startsWith(`${path}.`)).map((v) => v.message)
}

/** The value without empty strings, empty objects and undefined properties (left out). */
export function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      const c = compact(v)
      if (c === undefined || c === '') continue
      if (c && typeof c === 'object' && !Array.isArray(c) && Object.keys(c).length === 0 && k !== 'parameters') continue
      out[k] = c
    }
    return out
  }
  return value
}
