import { describe, expect, it } from 'vitest'
import { compact, fieldsOf, fromText, toText } from './schemaForm'

const ROOT = {
  type: 'object',
  required: ['name', 'api'],
  properties: {
    name: { type: 'string' },
    api: { $ref: '#/$defs/Api' },
    parameters: { type: 'object', additionalProperties: { type: 'object' } },
    retries: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null },
    read_only: { anyOf: [{ type: 'boolean' }, { type: 'null' }] },
    tags: { type: 'array', items: { type: 'string' } },
  },
  $defs: { Api: { type: 'object', additionalProperties: false, required: ['method'], properties: { method: { enum: ['GET', 'POST'] } } } },
}

describe('schema form', () => {
  const fields = fieldsOf(ROOT, ROOT)
  const by = Object.fromEntries(fields.map((f) => [f.name, f]))

  it('reads each property as a field kind, refs and nullables resolved', () => {
    expect(by.name.kind).toBe('text')
    expect(by.name.required).toBe(true)
    expect(by.api.kind).toBe('object')
    expect(fieldsOf(by.api.schema, ROOT, 'api')[0]).toMatchObject({ path: 'api.method', kind: 'choice', options: ['GET', 'POST'], required: true })
    expect(by.parameters.kind).toBe('json')
    expect(by.retries).toMatchObject({ kind: 'number', nullable: true })
    expect(by.read_only).toMatchObject({ kind: 'choice', options: ['true', 'false'] })
    expect(by.tags.kind).toBe('list')
  })

  it('turns text into values and back, and says what is wrong', () => {
    expect(fromText(by.retries, '3')).toEqual({ value: 3 })
    expect(fromText(by.retries, 'x').error).toBe('not a number')
    expect(fromText(by.read_only, 'false')).toEqual({ value: false })
    expect(fromText(by.tags, 'a, b,')).toEqual({ value: ['a', 'b'] })
    expect(fromText(by.parameters, '{oops').error).toContain('not valid JSON')
    expect(fromText(by.name, '  ')).toEqual({ value: undefined })
    expect(toText(by.tags, ['a', 'b'])).toBe('a, b')
    expect(compact({ a: '', b: {}, c: { d: undefined }, parameters: {}, e: 1 })).toEqual({ parameters: {}, e: 1 })
  })
})
