import { cleanup, fireEvent, render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Dialog } from './Dialog'
import { ParamsForm } from './ParamsForm'
import { fieldsFromInputs } from '../lib/fields'

afterEach(cleanup)

describe('Dialog', () => {
  it('moves focus in, keeps Tab inside, cancels on Escape and gives focus back', () => {
    const onCancel = vi.fn()
    const opener = document.createElement('button')
    document.body.appendChild(opener)
    opener.focus()
    const { unmount } = render(
      <Dialog title="Re-run from the failed node" onCancel={onCancel}>
        <button type="button" data-autofocus>Start</button>
        <button type="button">Cancel</button>
      </Dialog>,
    )
    const dialog = screen.getByRole('dialog', { name: 'Re-run from the failed node' })
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Start' }))
    screen.getByRole('button', { name: 'Cancel' }).focus()
    fireEvent.keyDown(dialog, { key: 'Tab' })
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Start' }))
    fireEvent.keyDown(dialog, { key: 'Escape' })
    expect(onCancel).toHaveBeenCalledOnce()
    unmount()
    expect(document.activeElement).toBe(opener)
    opener.remove()
  })
})

describe('ParamsForm with initial values', () => {
  it('starts from the values given and tells each change', () => {
    const fields = fieldsFromInputs([
      { name: 'passenger', type: 'str', json_type: 'string', required: true, default: null, example: null },
      { name: 'seats', type: 'int', json_type: 'integer', required: false, default: 1, example: null },
    ] as Parameters<typeof fieldsFromInputs>[0])
    const onValues = vi.fn()
    render(<ParamsForm fields={fields} submitLabel="Start run" violationPrefix="params" initial={{ passenger: 'Ada', seats: 2 }} onValues={onValues} onSubmit={() => {}} testId="p" />)
    expect((document.getElementById('p-passenger') as HTMLInputElement).value).toBe('Ada')
    expect((document.getElementById('p-seats') as HTMLInputElement).value).toBe('2')
    fireEvent.change(document.getElementById('p-passenger') as HTMLInputElement, { target: { value: 'Grace' } })
    expect(onValues).toHaveBeenLastCalledWith({ passenger: 'Grace', seats: 2 })
  })
})
