import { describe, expect, it } from 'vitest'
import { collectValues, fieldsFromExpects, fieldsFromInputs, paramsFromJson, textOf } from './fields'

describe('fields', () => {
  const fields = fieldsFromInputs([
    { name: 'city', type: 'str', json_type: 'string', required: true, default: null, example: 'AMS', description: null, format: null, enum: null },
    { name: 'days', type: 'int', json_type: 'integer', required: false, default: 7, example: null, description: null, format: null, enum: null },
    { name: 'tags', type: 'list', json_type: 'array', required: false, default: null, example: null, description: null, format: null, enum: null },
    { name: 'vip', type: 'bool', json_type: 'boolean', required: false, default: null, example: null, description: null, format: null, enum: null },
  ])

  it('types the values and leaves out empty optional ones', () => {
    const { values, errors } = collectValues(fields, { city: 'BCN', days: '3', tags: '["a"]', vip: 'true' })
    expect(errors).toEqual({})
    expect(values).toEqual({ city: 'BCN', days: 3, tags: ['a'], vip: true })
    expect(collectValues(fields, { city: 'X', days: '', tags: '', vip: 'false' }).values).toEqual({ city: 'X', vip: false })
  })

  it('names each bad field', () => {
    const { errors } = collectValues(fields, { city: '', days: '2.5', tags: '[oops', vip: 'false' })
    expect(errors).toEqual({ city: 'required', days: 'not an integer', tags: expect.stringContaining('not valid JSON') })
  })

  it('reads a yield expects', () => {
    const f = fieldsFromExpects({ selected_flight_id: { type: 'str', required: true }, seats: { type: 'int', required: false } })
    expect(f.map((x) => [x.name, x.jsonType, x.required])).toEqual([
      ['selected_flight_id', 'string', true],
      ['seats', 'integer', false],
    ])
  })

  it('takes an offered option with its own type', () => {
    const offered = fieldsFromExpects({
      seat: { type: 'any', required: true, options: [{ value: 12, label: 'row 12' }, { value: 'aisle', label: 'aisle' }] },
    })
    expect(offered[0].options).toHaveLength(2)
    expect(collectValues(offered, { seat: '12' }).values).toEqual({ seat: 12 })
    expect(collectValues(offered, { seat: 'aisle' }).values).toEqual({ seat: 'aisle' })
    expect(collectValues(offered, { seat: '' }).errors).toEqual({ seat: 'required' })
  })
})

describe('a new run from an earlier one', () => {
  const fields = fieldsFromInputs([
    { name: 'city', type: 'str', json_type: 'string', required: true, default: null, example: null },
    { name: 'days', type: 'int', json_type: 'integer', required: false, default: 3, example: null },
    { name: 'tags', type: 'list', json_type: 'array', required: false, default: null, example: null },
    { name: 'strict', type: 'bool', json_type: 'boolean', required: false, default: null, example: null },
  ] as Parameters<typeof fieldsFromInputs>[0])
  it('pre-fills each field with the earlier value, or its default when the run had none', () => {
    const params = { city: 'Lyon', tags: ['a', 'b'], strict: true }
    expect(fields.map((f) => textOf(f, params[f.name as keyof typeof params]))).toEqual(['Lyon', '3', '["a","b"]', 'true'])
    const texts = Object.fromEntries(fields.map((f) => [f.name, textOf(f, params[f.name as keyof typeof params])]))
    expect(collectValues(fields, texts).values).toEqual({ city: 'Lyon', days: 3, tags: ['a', 'b'], strict: true })
  })
  it('reads params typed as JSON, saying why a text is not an object', () => {
    expect(paramsFromJson('{"city": "Nice"}')).toEqual({ values: { city: 'Nice' } })
    expect(paramsFromJson('  ')).toEqual({ values: {} })
    expect(paramsFromJson('[1]')).toEqual({ error: expect.stringContaining('a JSON object') })
    expect(paramsFromJson('{city')).toEqual({ error: expect.stringContaining('not valid JSON') })
  })
})
