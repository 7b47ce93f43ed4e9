import { describe, expect, it } from 'vitest'
import { lazyPageFor } from './preload'

describe('lazyPageFor', () => {
  it('names the lazy page of a deep link', () => {
    expect(lazyPageFor('#/runs/6d40682b')).toBe('run')
    expect(lazyPageFor('#/workflows/book_flight')).toBe('editor')
    expect(lazyPageFor('#/workflows/book_flight?run=1')).toBe('editor')
    expect(lazyPageFor('#/catalogs')).toBe('catalogs')
  })

  it('names none for the pages in the main chunk', () => {
    for (const hash of ['', '#/', '#/single', '#/tools', '#/runs', '#/runs?status=failed', '#/workflows', '#/workflows/book_flight/triggers']) {
      expect(lazyPageFor(hash)).toBeNull()
    }
  })
})
