// Light, dark, or the system's theme (the palette in styles.css follows prefers-color-scheme).
import { useState } from 'react'
import { applyTheme, storedTheme, THEMES, type Theme } from '../lib/theme'

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(storedTheme)
  return (
    <label className="theme-toggle inline">
      <span className="sr-only">Colour theme</span>
      <select
        value={theme}
        data-testid="theme-toggle"
        onChange={(e) => {
          const next = e.target.value as Theme
          applyTheme(next)
          setTheme(next)
        }}
      >
        {THEMES.map((t) => (
          <option key={t} value={t}>{t === 'system' ? 'Theme: system' : t === 'light' ? 'Theme: light' : 'Theme: dark'}</option>
        ))}
      </select>
    </label>
  )
}
