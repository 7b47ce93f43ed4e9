import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { useState } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Violation } from '../api/client'
import { clearViolations } from '../lib/toolForm'
import { SchemaForm } from './SchemaForm'
import { TOOL_FIELDS } from './ToolFields'

afterEach(cleanup)

const SCHEMA = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    parameters: { type: 'object', additionalProperties: { type: 'object' } },
    auth: { type: 'object', additionalProperties: false, properties: { secret: { type: 'string' } } },
    output_schema: { anyOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }] },
  },
}
const INITIAL = {
  name: 'weather',
  parameters: { city: { in: 'query', type: 'string', required: true } },
  auth: { secret: 'abc' },
  output_schema: { type: 'object', properties: { temp: { type: 'number' }, wind: { type: 'object', properties: { speed: { type: 'number' } } } } },
}

function Harness({ onSubmit, start = [] }: { onSubmit: (v: Record<string, unknown>) => void; start?: Violation[] }) {
  const [violations, setViolations] = useState<Violation[]>(start)
  return (
    <>
      <SchemaForm schema={SCHEMA} initial={INITIAL} submitLabel="Save" violations={violations} onEdit={(p) => setViolations((v) => clearViolations(v, p))} custom={TOOL_FIELDS} onSubmit={onSubmit} testId="f" />
      <div data-testid="left">{violations.length}</div>
    </>
  )
}

const rowOf = (i: number) => screen.getByTestId(`f-parameters-row-${i}`)
const inRow = (i: number, label: string) => within(rowOf(i)).getByLabelText(label) as HTMLInputElement

describe('the tool form', () => {
  it('edits parameters row by row and saves them', () => {
    const onSubmit = vi.fn()
    render(<Harness onSubmit={onSubmit} />)
    expect(inRow(0, 'name').value).toBe('city')
    fireEvent.click(screen.getByTestId('f-parameters-add'))
    fireEvent.change(inRow(1, 'name'), { target: { value: 'days' } })
    fireEvent.change(within(rowOf(1)).getByLabelText('parameter days type'), { target: { value: 'integer' } })
    fireEvent.change(inRow(1, 'example'), { target: { value: '3' } })
    fireEvent.click(within(rowOf(1)).getByLabelText('Move parameter days up'))
    fireEvent.click(screen.getByText('Save'))
    const saved = onSubmit.mock.calls[0][0]
    expect(Object.keys(saved.parameters)).toEqual(['days', 'city'])
    expect(saved.parameters.days).toEqual({ in: 'query', type: 'integer', example: 3 })
    expect(saved.output_schema.properties.wind).toEqual({ type: 'object', properties: { speed: { type: 'number' } } })
  })

  it('shows the same parameters as JSON, takes edits there, and keeps the form while the JSON is broken', () => {
    const onSubmit = vi.fn()
    render(<Harness onSubmit={onSubmit} />)
    fireEvent.click(screen.getByTestId('f-parameters-as-json'))
    const json = screen.getByTestId('f-parameters-json') as HTMLTextAreaElement
    expect(JSON.parse(json.value)).toEqual(INITIAL.parameters)
    fireEvent.change(json, { target: { value: '{"city": {"in": "query", "type": "string", "required": true}, "q": {"in": "header"}}' } })
    fireEvent.change(json, { target: { value: '{"city": ' } })
    expect(screen.getByTestId('f-parameters-json-error').textContent).toContain('not valid JSON')
    fireEvent.click(screen.getByTestId('f-parameters-as-form'))
    expect(screen.getByTestId('f-parameters-refusal').textContent).toContain('The JSON is not valid')
    fireEvent.click(screen.getByText('Save'))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByText(/parameters: not valid JSON/)).toBeTruthy()
    fireEvent.change(json, { target: { value: '{"city": {"in": "query"}, "q": {"in": "header"}}' } })
    fireEvent.click(screen.getByTestId('f-parameters-as-form'))
    expect(inRow(1, 'name').value).toBe('q')
    expect((within(rowOf(1)).getByLabelText('in') as HTMLSelectElement).value).toBe('header')
  })

  it('says nested output properties are edited as JSON', () => {
    render(<Harness onSubmit={vi.fn()} />)
    expect(screen.getByTestId('f-output_schema-row-1').textContent).toContain('nested: properties — edit these in the JSON view')
  })

  it('shows each server violation at its field and drops it when that field is edited', () => {
    const start = [
      { path: 'auth.secret', message: 'must be a tool secret reference' },
      { path: 'parameters.city.type', message: 'not a valid JSON Schema' },
    ]
    render(<Harness onSubmit={vi.fn()} start={start} />)
    expect(rowOf(0).textContent).toContain('type: not a valid JSON Schema')
    expect(screen.getByText('must be a tool secret reference')).toBeTruthy()
    fireEvent.change(inRow(0, 'description'), { target: { value: 'The city' } })
    expect(screen.getByTestId('left').textContent).toBe('2')
    fireEvent.change(within(rowOf(0)).getByLabelText('parameter city type'), { target: { value: 'integer' } })
    expect(rowOf(0).textContent).not.toContain('not a valid JSON Schema')
    expect(screen.getByTestId('left').textContent).toBe('1')
    fireEvent.change(screen.getByLabelText('secret'), { target: { value: 'secret:KEY' } })
    expect(screen.queryByText('must be a tool secret reference')).toBeNull()
    expect(screen.getByTestId('left').textContent).toBe('0')
  })
})
