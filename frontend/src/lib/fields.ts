// Form fields from a workflow's params or a yield's `expects`, and typed values from the text
// the user typed. Errors name the field.
import type { ChoiceOption, InputParam, ParamSpec } from '../api/types'

export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'any'

export interface Field {
  name: string
  jsonType: JsonType
  required: boolean
  defaultValue: unknown
  example: unknown
  description: string | null
  format: string | null
  enum: unknown[] | null
  /** Offered choices (a yield's): picked from a table instead of typed. */
  options?: ChoiceOption[] | null
}

const TYPE_MAP: Record<string, JsonType> = {
  str: 'string', string: 'string', int: 'integer', integer: 'integer', float: 'number', number: 'number',
  bool: 'boolean', boolean: 'boolean', list: 'array', array: 'array', dict: 'object', object: 'object', any: 'any',
}

export function jsonType(type: string | null | undefined): JsonType {
  return TYPE_MAP[type ?? 'any'] ?? 'any'
}

export function fieldsFromInputs(params: InputParam[]): Field[] {
  return params.map((p) => ({
    name: p.name,
    jsonType: jsonType(p.json_type ?? p.type),
    required: p.required,
    defaultValue: p.default,
    example: p.example,
    description: p.description ?? null,
    format: p.format ?? null,
    enum: p.enum ?? null,
  }))
}

/** Fields of a waiting yield's `expects` ({name: {type, required, ...}}, with offered options). */
export function fieldsFromExpects(expects: Record<string, ParamSpec> | undefined): Field[] {
  return Object.entries(expects ?? {}).map(([name, s]) => ({
    name,
    jsonType: jsonType(s.type),
    required: s.required,
    defaultValue: s.default ?? null,
    example: s.example ?? null,
    description: s.description ?? null,
    format: s.format ?? null,
    enum: s.enum ?? null,
    options: s.options ?? null,
  }))
}

/** The initial text of a field: its default, else empty. */
export function initialText(field: Field): string {
  const v = field.defaultValue
  if (v === null || v === undefined) return field.jsonType === 'boolean' ? 'false' : ''
  return typeof v === 'string' ? v : JSON.stringify(v)
}

/** The text of a field holding `value` (a run's param): as typed, JSON for a list or object. */
export function textOf(field: Field, value: unknown): string {
  if (value === undefined) return initialText(field)
  if (value === null) return field.jsonType === 'boolean' ? 'false' : ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Params typed as a JSON object; `error` says why the text is not one. */
export function paramsFromJson(text: string): { values: Record<string, unknown> } | { error: string } {
  let parsed: unknown
  try {
    parsed = JSON.parse(text.trim() === '' ? '{}' : text)
  } catch (exc) {
    return { error: `not valid JSON: ${(exc as Error).message}` }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: 'the params must be a JSON object like {"name": "value"}' }
  return { values: parsed as Record<string, unknown> }
}

/** Typed values from texts; `errors` maps a field name to what is wrong with it. */
export function collectValues(fields: Field[], texts: Record<string, string>): { values: Record<string, unknown>; errors: Record<string, string> } {
  const values: Record<string, unknown> = {}
  const errors: Record<string, string> = {}
  for (const f of fields) {
    const text = (texts[f.name] ?? '').trim()
    const option = f.options?.find((o) => String(o.value) === text)
    if (option) {
      values[f.name] = option.value // the offered value, with its own type
      continue
    }
    if (text === '' && f.jsonType !== 'boolean') {
      if (f.required && (f.defaultValue === null || f.defaultValue === undefined)) errors[f.name] = 'required'
      continue
    }
    switch (f.jsonType) {
      case 'integer':
      case 'number': {
        const n = Number(text)
        if (!Number.isFinite(n) || (f.jsonType === 'integer' && !Number.isInteger(n))) errors[f.name] = `not ${f.jsonType === 'integer' ? 'an integer' : 'a number'}`
        else values[f.name] = n
        break
      }
      case 'boolean':
        values[f.name] = text === 'true'
        break
      case 'array':
      case 'object':
      case 'any':
        try {
          values[f.name] = JSON.parse(text)
        } catch {
          if (f.jsonType === 'any') values[f.name] = text
          else errors[f.name] = `not valid JSON (${f.jsonType === 'array' ? 'a list like [1, 2]' : 'an object like {"a": 1}'})`
        }
        break
      default:
        values[f.name] = texts[f.name] ?? ''
    }
  }
  return { values, errors }
}
