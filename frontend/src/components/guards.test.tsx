import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import type { ToolSummary } from '../api/types'
import { useLeaveGuard, useRoute } from '../lib/router'
import { EventLog } from './EventLog'
import { LeaveDialog } from './LeaveDialog'
import { filterTools, ToolPicker } from './ToolPicker'
import type { RunEvent } from '../api/types'
import { useState } from 'react'

afterEach(cleanup)

function Guarded({ dirty }: { dirty: boolean }) {
  const question = useLeaveGuard(dirty)
  const { path } = useRoute()
  return (
    <div>
      <span data-testid="where">{path.join('/')}</span>
      <a href="#/tools">Tools</a>
      <a href="#/workflows/x?run=1">same page</a>
      <LeaveDialog question={question} what="The document x has unsaved changes." />
    </div>
  )
}

describe('leaving a page with unsaved changes', () => {
  it('asks first: stay keeps the page and its address, leave goes', async () => {
    window.location.hash = '#/workflows/x'
    render(<Guarded dirty />)
    await waitFor(() => expect(screen.getByTestId('where').textContent).toBe('workflows/x'))
    fireEvent.click(screen.getByText('Tools'))
    expect(screen.getByRole('dialog', { name: 'Leave with unsaved changes?' })).toBeTruthy()
    expect(window.location.hash).toBe('#/workflows/x')
    fireEvent.click(screen.getByRole('button', { name: 'Stay' }))
    expect(screen.queryByTestId('leave-dialog')).toBeNull()
    expect(window.location.hash).toBe('#/workflows/x')

    // A hash typed into the address bar is put back, then asked about.
    await act(async () => {
      window.location.hash = '#/runs'
      await new Promise((resolve) => setTimeout(resolve, 20))
    })
    expect(window.location.hash).toBe('#/workflows/x')
    expect(screen.getByTestId('where').textContent).toBe('workflows/x')
    expect(screen.getByTestId('leave-dialog')).toBeTruthy()
    fireEvent.click(screen.getByRole('button', { name: 'Leave without saving' }))
    await waitFor(() => expect(screen.getByTestId('where').textContent).toBe('runs'))
    expect(window.location.hash).toBe('#/runs')
  })

  it('lets the query of the same page change, and anything go when nothing is unsaved', async () => {
    window.location.hash = '#/workflows/x'
    const { rerender } = render(<Guarded dirty />)
    fireEvent.click(screen.getByText('same page'))
    await waitFor(() => expect(window.location.hash).toBe('#/workflows/x?run=1'))
    expect(screen.queryByTestId('leave-dialog')).toBeNull()
    rerender(<Guarded dirty={false} />)
    fireEvent.click(screen.getByText('Tools'))
    await waitFor(() => expect(screen.getByTestId('where').textContent).toBe('tools'))
  })
})

describe('EventLog pause', () => {
  const ev = (position: number, type: RunEvent['type']): RunEvent => ({ position, type, seq: position, at: '2026-01-01T00:00:00Z', run_id: 'r' }) as RunEvent
  it('is offered while the log is live, not once it ended (unless events are held)', () => {
    const events = [ev(1, 'run_started')]
    const { rerender } = render(<EventLog events={events} nodes={{}} live onSelectNode={() => {}} />)
    expect(screen.getByTestId('pause-events').textContent).toBe('Pause')
    rerender(<EventLog events={events} nodes={{}} live={false} onSelectNode={() => {}} />)
    expect(screen.queryByTestId('pause-events')).toBeNull()
    rerender(<EventLog events={events} nodes={{}} live onSelectNode={() => {}} />)
    fireEvent.click(screen.getByTestId('pause-events'))
    rerender(<EventLog events={[...events, ev(2, 'run_succeeded')]} nodes={{}} live={false} onSelectNode={() => {}} />)
    expect(screen.getByTestId('pause-events').textContent).toBe('Resume (1 new)')
    fireEvent.click(screen.getByTestId('pause-events'))
    expect(screen.queryByTestId('pause-events')).toBeNull()
  })
})

describe('ToolPicker filter', () => {
  const tool = (name: string, description: string) => ({ name, description, method: 'GET', parameters: {} }) as unknown as ToolSummary
  const tools = [
    tool('search_flights', 'Search flights between two airports.'),
    tool('search_flights_partner', 'Search flights through the partner gateway.'),
    tool('check_availability', 'Use it after search_flights.'),
  ]

  it('lists the closest matches: exact name, else names, else descriptions', () => {
    const names = (f: ReturnType<typeof filterTools>) => f.shown.map((m) => m.tool.name)
    expect(names(filterTools(tools, ' Search_Flights '))).toEqual(['search_flights'])
    expect(filterTools(tools, 'search_flights').more).toBe(2)
    expect(names(filterTools(tools, 'search_fl'))).toEqual(['search_flights', 'search_flights_partner'])
    expect(filterTools(tools, 'after').shown).toEqual([{ tool: tools[2], match: 'description' }])
    expect(names(filterTools(tools, 'search_flights', true))).toEqual(['search_flights', 'search_flights_partner', 'check_availability'])
  })

  it('"Select shown" selects exactly the tools in the list', () => {
    function Picker() {
      const [selected, setSelected] = useState<string[]>([])
      return (
        <>
          <ToolPicker tools={tools} selected={selected} onChange={setSelected} />
          <span data-testid="selected">{selected.join(',')}</span>
        </>
      )
    }
    render(<Picker />)
    fireEvent.change(screen.getByLabelText('Filter tools'), { target: { value: 'search_flights' } })
    expect(screen.getAllByRole('checkbox')).toHaveLength(1)
    fireEvent.click(screen.getByRole('button', { name: 'Select shown (1)' }))
    expect(screen.getByTestId('selected').textContent).toBe('search_flights')
    fireEvent.click(screen.getByRole('button', { name: 'Show them' }))
    expect(screen.getAllByRole('checkbox')).toHaveLength(3)
    expect(screen.getByText('matched in its description')).toBeTruthy()
    fireEvent.click(screen.getByRole('button', { name: 'Select shown (3)' }))
    expect(screen.getByTestId('selected').textContent).toBe('search_flights,search_flights_partner,check_availability')
  })
})
