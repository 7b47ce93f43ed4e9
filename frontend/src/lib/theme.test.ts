import { afterEach, describe, expect, it } from 'vitest'
import { applyTheme, storedTheme } from './theme'

describe('theme', () => {
  afterEach(() => {
    localStorage.clear()
    delete document.documentElement.dataset.theme
  })

  it('follows the system until one is picked, and keeps the pick', () => {
    expect(storedTheme()).toBe('system')
    applyTheme('dark')
    expect(document.documentElement.dataset.theme).toBe('dark')
    expect(storedTheme()).toBe('dark')
    applyTheme('system')
    expect(document.documentElement.dataset.theme).toBeUndefined()
    expect(storedTheme()).toBe('system')
  })

  it('reads anything else stored as the system theme', () => {
    localStorage.setItem('dt-theme', 'purple')
    expect(storedTheme()).toBe('system')
  })
})
