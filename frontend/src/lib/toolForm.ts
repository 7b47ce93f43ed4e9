// A tool's parameters and output schema as rows a form edits, and back: each parameter one
// row (name, in, type, required, enum, format, description, example; its other JSON Schema
// keywords kept as they are), each output property one row (nested ones only as JSON). Also
// the server's violations as the form clears them, field by field.
import { ApiError, type Violation } from '../api/client'
import { collectValues, type Field, type JsonType, textOf } from './fields'

export const LOCATIONS = ['query', 'path', 'header', 'cookie', 'body'] as const
export const TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const
export type RowType = (typeof TYPES)[number] | ''

type Json = Record<string, unknown>

export interface ParamRow {
  /** Stable across renames (React key; where a row's errors are kept). */
  key: string
  name: string
  location: string
  type: RowType
  required: boolean
  /** Comma-separated values; `enumInJson` when they cannot be said so (kept in `extra`). */
  enumText: string
  enumInJson: boolean
  format: string
  description: string
  example: string
  /** The parameter's other keywords (items, default, minimum, …), kept as they are. */
  extra: Json
}

export interface PropertyRow {
  key: string
  name: string
  type: RowType
  required: boolean
  description: string
  /** Nested properties, items and other keywords: edited in the JSON view only. */
  extra: Json
}

/** What is wrong with rows: by row key, then by column (`name`, `example`, `enum`, …). */
export type RowErrors = Record<string, Record<string, string>>

let counter = 0
export const newKey = (): string => `row-${(counter += 1)}`

const isObject = (v: unknown): v is Json => Boolean(v) && typeof v === 'object' && !Array.isArray(v)

function rowType(type: unknown): RowType {
  return typeof type === 'string' && (TYPES as readonly string[]).includes(type) ? (type as RowType) : ''
}

function fieldOf(name: string, type: RowType): Field {
  return { name, jsonType: (type || 'any') as JsonType, required: false, defaultValue: null, example: null, description: null, format: null, enum: null }
}

/** One value typed by the row's type, as a workflow form reads it (lib/fields). */
function typed(type: RowType, text: string): { value?: unknown; error?: string } {
  const read = collectValues([fieldOf('v', type)], { v: text })
  return read.errors.v ? { error: read.errors.v } : { value: read.values.v }
}

/** Whether values read back the same from a comma list typed by `type`. */
function sayable(values: unknown[], type: RowType): boolean {
  return values.every((v) => {
    const text = String(v)
    return ['string', 'number', 'boolean'].includes(typeof v) && !text.includes(',') && text.trim() === text && text !== '' && typed(type, text).value === v
  })
}

export function newParamRow(): ParamRow {
  return { key: newKey(), name: '', location: 'query', type: 'string', required: false, enumText: '', enumInJson: false, format: '', description: '', example: '', extra: {} }
}

/** The rows of a tool's `parameters` ({name: {in, required, type, …}}), in order. */
export function rowsFromParameters(parameters: unknown): ParamRow[] {
  return Object.entries(isObject(parameters) ? parameters : {}).map(([name, raw]) => {
    const { in: location, required, type, enum: values, format, description, example, ...extra } = isObject(raw) ? raw : {}
    const t = rowType(type)
    if (type !== undefined && t === '') extra.type = type
    const enumInJson = values !== undefined && !(Array.isArray(values) && sayable(values, t))
    if (enumInJson) extra.enum = values
    return {
      key: newKey(),
      name,
      location: typeof location === 'string' ? location : 'query',
      type: t,
      required: required === true,
      enumText: !enumInJson && Array.isArray(values) ? values.map(String).join(', ') : '',
      enumInJson,
      format: typeof format === 'string' ? format : '',
      description: typeof description === 'string' ? description : '',
      example: example === undefined ? '' : textOf(fieldOf(name, t), example),
      extra,
    }
  })
}

/** `parameters` from rows; `errors` says what stops it (a name missing or twice, a bad value). */
export function parametersFromRows(rows: ParamRow[]): { value: Json; errors: RowErrors } {
  const value: Json = {}
  const errors: RowErrors = {}
  const fail = (row: ParamRow, column: string, message: string) => {
    errors[row.key] = { ...errors[row.key], [column]: message }
  }
  for (const row of rows) {
    const name = row.name.trim()
    if (!name) fail(row, 'name', 'a parameter needs a name')
    else if (name in value) fail(row, 'name', `'${name}' is there twice`)
    const p: Json = { in: row.location, ...(row.required ? { required: true } : {}) }
    if (row.type) p.type = row.type
    if (row.format.trim()) p.format = row.format.trim()
    if (row.description.trim()) p.description = row.description
    Object.assign(p, row.extra)
    if (!row.enumInJson && row.enumText.trim()) {
      const items = row.enumText.split(',').map((s) => s.trim()).filter(Boolean).map((s) => typed(row.type, s))
      const bad = items.find((i) => i.error)
      if (bad) fail(row, 'enum', `a value is ${bad.error}`)
      else p.enum = items.map((i) => i.value)
    }
    if (row.example.trim()) {
      const read = typed(row.type, row.example)
      if (read.error) fail(row, 'example', read.error)
      else p.example = read.value
    }
    if (name && !(name in value)) value[name] = p
  }
  return { value, errors }
}

export function newPropertyRow(): PropertyRow {
  return { key: newKey(), name: '', type: 'string', required: false, description: '', extra: {} }
}

export interface OutputRows {
  rows: PropertyRow[]
  /** The schema's keywords besides `type`, `properties` and `required` (title, …). */
  rest: Json
}

/** The property rows of an output schema; null when it is no object with properties. */
export function rowsFromOutputSchema(schema: unknown): OutputRows | null {
  if (schema === null || schema === undefined) return { rows: [], rest: {} }
  if (!isObject(schema)) return null
  const { type, properties, required, ...rest } = schema
  if ((type !== undefined && type !== 'object') || (properties !== undefined && !isObject(properties))) return null
  if (required !== undefined && !Array.isArray(required)) return null
  const needed = new Set((required ?? []) as unknown[])
  const rows = Object.entries((properties ?? {}) as Json).map(([name, raw]) => {
    const { type: t, description, ...extra } = isObject(raw) ? raw : {}
    const kind = rowType(t)
    if (t !== undefined && kind === '') extra.type = t
    return { key: newKey(), name, type: kind, required: needed.has(name), description: typeof description === 'string' ? description : '', extra }
  })
  return { rows, rest }
}

/** The output schema of rows (none when there are no rows and nothing else). */
export function outputSchemaFromRows({ rows, rest }: OutputRows): { value: Json | null; errors: RowErrors } {
  const errors: RowErrors = {}
  const properties: Json = {}
  for (const row of rows) {
    const name = row.name.trim()
    if (!name) errors[row.key] = { name: 'a property needs a name' }
    else if (name in properties) errors[row.key] = { name: `'${name}' is there twice` }
    else properties[name] = { ...(row.type ? { type: row.type } : {}), ...(row.description.trim() ? { description: row.description } : {}), ...row.extra }
  }
  if (rows.length === 0 && Object.keys(rest).length === 0) return { value: null, errors }
  const required = rows.filter((r) => r.required && r.name.trim()).map((r) => r.name.trim())
  return { value: { type: 'object', ...rest, properties, ...(required.length ? { required: [...new Set(required)] } : {}) }, errors }
}

/** Whether a property row holds more than the form shows (nested properties, items, …). */
export function nestedKeys(row: PropertyRow): string[] {
  return Object.keys(row.extra)
}

/** A JSON text as an object (or null for an empty text); `error` when it is not one. */
export function parseObject(text: string): { value: Json | null } | { error: string } {
  if (!text.trim()) return { value: null }
  try {
    const parsed: unknown = JSON.parse(text)
    if (parsed === null) return { value: null }
    return isObject(parsed) ? { value: parsed } : { error: 'not a JSON object like {"a": {…}}' }
  } catch (exc) {
    return { error: `not valid JSON: ${(exc as Error).message}` }
  }
}

/** Whether violation path `path` is about `field` (the field itself, inside it, or around it). */
export function touches(path: string | null | undefined, field: string): boolean {
  if (!path) return false
  return path === field || path.startsWith(`${field}.`) || field.startsWith(`${path}.`)
}

/** The violations left once `field` was edited: those about it go. */
export function clearViolations(violations: Violation[], field: string): Violation[] {
  return violations.filter((v) => !touches(v.path, field))
}

/** The error to show once some violations were fixed: null when none is left (a 422's). */
export function withRemaining(error: ApiError | null, remaining: Violation[]): ApiError | null {
  if (!error || error.violations.length === 0) return error
  if (remaining.length === 0) return null
  return new ApiError({ status: error.status, code: error.code, message: error.message, where: error.where, violations: remaining, correlationId: error.correlationId, body: error.body, scope: error.scope })
}
