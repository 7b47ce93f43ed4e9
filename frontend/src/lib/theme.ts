// The colour theme: the system's (prefers-color-scheme) unless the user picked light or dark,
// which is kept in localStorage and set as data-theme on <html> (styles.css reads it).

export type Theme = 'system' | 'light' | 'dark'

const KEY = 'dt-theme'
export const THEMES: Theme[] = ['system', 'light', 'dark']

export function storedTheme(): Theme {
  try {
    const value = localStorage.getItem(KEY)
    return value === 'light' || value === 'dark' ? value : 'system'
  } catch {
    return 'system' // storage refused (a private window, a sandbox): follow the system
  }
}

export function applyTheme(theme: Theme): void {
  const root = document.documentElement
  if (theme === 'system') delete root.dataset.theme
  else root.dataset.theme = theme
  try {
    if (theme === 'system') localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, theme)
  } catch {
    // not kept across visits; the page still shows it
  }
}
