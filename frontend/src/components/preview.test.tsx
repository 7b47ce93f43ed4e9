import { cleanup, render, screen } from '@testing-library/react'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { DrawnNode } from '../api/types'
import { DocumentPreview } from './DocumentPreview'

afterEach(cleanup)
beforeAll(() => {
  // React Flow measures its pane; jsdom has no layout, so nothing is ever observed.
  vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} })
})

const note: DrawnNode = { id: 'hello', kind: 'note', label: 'note (hello)', depends_on: [], activates: [] }

describe('DocumentPreview', () => {
  it('draws what the server drew, a kind unknown here too, and keeps it while the text does not load', () => {
    const { rerender } = render(<DocumentPreview graphs={{ greet: [note] }} preferred={null} />)
    const drawn = screen.getByTestId('graph-node-hello')
    expect(drawn.textContent).toContain('note (hello)')
    expect(drawn.querySelector('.graph-node-kind')?.textContent).toBe('note')
    rerender(<DocumentPreview graphs={{}} preferred={null} />)
    expect(screen.getByTestId('graph-preview').textContent).toContain('the document does not load (showing the last readable version)')
    expect(screen.getByTestId('graph-node-hello').textContent).toContain('note (hello)')
  })

  it('shows the saved workflow until the text was checked', () => {
    render(<DocumentPreview graphs={null} preferred="greet" fallback={{ greet: [{ ...note, id: 'saved' }] }} />)
    expect(screen.getByTestId('graph-node-saved').textContent).toContain('note (hello)')
    expect(screen.getByTestId('graph-preview').textContent).not.toContain('does not load')
  })
})
