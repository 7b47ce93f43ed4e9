import { render, screen } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import type { components } from '../api/schema'
import { RunChart, filtersOf, valueFilter } from './RunsPage'

describe('the run search filter bar', () => {
  it('reads the URL filters and a value filter', () => {
    const q = new URLSearchParams('status=failed,running&params.passenger=Ada&limit=5&junk=1')
    expect(filtersOf(q)).toEqual({ status: 'failed,running', 'params.passenger': 'Ada' })
    expect(valueFilter('passenger=Ada')).toEqual(['params.passenger', 'Ada'])
    expect(valueFilter('output.booking = B1')).toEqual(['output.booking', 'B1'])
    expect(valueFilter('nothing')).toBeNull()
  })

  it('draws counts by status over time with a label saying them', () => {
    const stats: components['schemas']['RunStats'] = {
      since: '2026-01-01T00:00:00Z', until: '2026-01-01T01:00:00Z', bucket_s: 1800, total: 3,
      by_status: { failed: 1, succeeded: 2 }, by_workflow: [],
      buckets: [
        { start: '2026-01-01T00:00:00Z', counts: { succeeded: 2 }, total: 2 },
        { start: '2026-01-01T00:30:00Z', counts: { failed: 1 }, total: 1 },
      ],
    }
    const { container } = render(<RunChart stats={stats} />)
    expect(screen.getByRole('img').getAttribute('aria-label')).toContain('3 (2 succeeded, 1 failed)')
    expect(container.querySelectorAll('rect')).toHaveLength(2)
  })
})
