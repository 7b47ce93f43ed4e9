import { describe, expect, it } from 'vitest'
import { ApiError } from '../api/client'
import { clearViolations, outputSchemaFromRows, parametersFromRows, parseObject, rowsFromOutputSchema, rowsFromParameters, withRemaining } from './toolForm'

const PARAMS = {
  city: { in: 'query', required: true, type: 'string', description: 'The city', example: 'Paris', enum: ['Paris', 'Rome'] },
  days: { in: 'query', type: 'integer', minimum: 1, example: 3, enum: [1, 3, 7] },
  id: { in: 'path', required: true, type: 'string', format: 'uuid' },
  tags: { in: 'query', type: 'array', items: { type: 'string' }, example: ['a', 'b'] },
  odd: { in: 'header', enum: ['a,b', 'c'] },
  mixed: { in: 'query', type: 'string', enum: [1, 'two'] },
}

describe('parameter rows', () => {
  it('are the parameters, one row each, and give them back as they were', () => {
    const rows = rowsFromParameters(PARAMS)
    expect(rows.map((r) => r.name)).toEqual(['city', 'days', 'id', 'tags', 'odd', 'mixed'])
    expect(rows[0]).toMatchObject({ location: 'query', type: 'string', required: true, enumText: 'Paris, Rome', example: 'Paris', description: 'The city' })
    expect(rows[1]).toMatchObject({ type: 'integer', enumText: '1, 3, 7', example: '3', extra: { minimum: 1 } })
    expect(rows[3]).toMatchObject({ example: '["a","b"]', extra: { items: { type: 'string' } } })
    // an enum a comma list cannot say stays as it is, edited as JSON
    expect(rows[4]).toMatchObject({ enumInJson: true, type: '', extra: { enum: ['a,b', 'c'] } })
    expect(rows[5]).toMatchObject({ enumInJson: true, extra: { enum: [1, 'two'] } }) // 1 would come back as '1'
    expect(parametersFromRows(rows)).toEqual({ value: PARAMS, errors: {} })
  })

  it('type the enum and the example by the row type, and say what is wrong, by row and column', () => {
    const [days] = rowsFromParameters({ days: PARAMS.days })
    const good = parametersFromRows([{ ...days, enumText: '2, 4', example: '4' }])
    expect(good.value.days).toMatchObject({ enum: [2, 4], example: 4 })
    const bad = parametersFromRows([{ ...days, enumText: '2, x', example: '1.5' }, { ...days, key: 'k2' }, { ...days, key: 'k3', name: ' ' }])
    expect(bad.errors[days.key]).toEqual({ enum: 'a value is not an integer', example: 'not an integer' })
    expect(bad.errors.k2).toEqual({ name: "'days' is there twice" })
    expect(bad.errors.k3).toEqual({ name: 'a parameter needs a name' })
  })
})

describe('output schema rows', () => {
  const SCHEMA = {
    type: 'object',
    title: 'Weather',
    properties: { temp: { type: 'number', description: 'Celsius' }, wind: { type: 'object', properties: { speed: { type: 'number' } } } },
    required: ['temp'],
  }
  it('are its properties (nested ones kept for the JSON view) and give the schema back', () => {
    const out = rowsFromOutputSchema(SCHEMA)
    expect(out?.rows.map((r) => [r.name, r.type, r.required])).toEqual([['temp', 'number', true], ['wind', 'object', false]])
    expect(out?.rows[1].extra).toEqual({ properties: { speed: { type: 'number' } } })
    expect(outputSchemaFromRows(out!)).toEqual({ value: SCHEMA, errors: {} })
  })
  it('is none without rows, and no form for a schema that is no object', () => {
    expect(outputSchemaFromRows(rowsFromOutputSchema(null)!)).toEqual({ value: null, errors: {} })
    expect(rowsFromOutputSchema({ type: 'array', items: { type: 'string' } })).toBeNull()
  })
})

describe('JSON text', () => {
  it('is an object, nothing, or says why not', () => {
    expect(parseObject('{"a": 1}')).toEqual({ value: { a: 1 } })
    expect(parseObject('  ')).toEqual({ value: null })
    expect('error' in parseObject('{oops')).toBe(true)
    expect(parseObject('[1]')).toEqual({ error: 'not a JSON object like {"a": {…}}' })
  })
})

describe('violations cleared field by field', () => {
  const violations = [
    { path: 'auth.secret', message: 'must be a tool secret reference' },
    { path: 'parameters.q', message: 'not a valid JSON Schema' },
    { path: 'parameters.r.type', message: 'bad type' },
    { path: 'name', message: 'a tool name is …' },
  ]
  it('go when their field (or a part of it) is edited, the others stay', () => {
    expect(clearViolations(violations, 'auth.secret').map((v) => v.path)).toEqual(['parameters.q', 'parameters.r.type', 'name'])
    expect(clearViolations(violations, 'parameters.q.type').map((v) => v.path)).toEqual(['auth.secret', 'parameters.r.type', 'name'])
    expect(clearViolations(violations, 'parameters.r.description').map((v) => v.path)).toEqual(violations.map((v) => v.path))
    expect(clearViolations(violations, 'parameters.r').map((v) => v.path)).toEqual(['auth.secret', 'parameters.q', 'name'])
  })
  it('leave a banner with those left, and none once all are fixed', () => {
    const error = new ApiError({ status: 422, code: 'invalid_tool_config', message: 'the tool config is invalid', where: 'PUT /tools/x', violations })
    expect(withRemaining(error, violations.slice(1))?.violations).toHaveLength(3)
    expect(withRemaining(error, [])).toBeNull()
    const down = new ApiError({ status: 0, code: 'network_error', message: 'unreachable', where: 'PUT /tools/x' })
    expect(withRemaining(down, [])).toBe(down)
  })
})
