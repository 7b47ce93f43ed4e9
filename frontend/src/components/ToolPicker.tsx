// Choose the candidate tools of a single-shot request; each shows its description and,
// when expanded, its parameters.
import { useState } from 'react'
import type { ToolSummary } from '../api/types'
import { ToolParameters } from './ToolParameters'

interface Props {
  tools: ToolSummary[]
  selected: string[]
  onChange: (ids: string[]) => void
}

export function ToolPicker({ tools, selected, onChange }: Props) {
  const [filter, setFilter] = useState('')
  const [expanded, setExpanded] = useState<string | null>(null)
  const needle = filter.trim().toLowerCase()
  const shown = tools.filter((t) => !needle || t.name.toLowerCase().includes(needle) || t.description.toLowerCase().includes(needle))
  const toggle = (name: string) =>
    onChange(selected.includes(name) ? selected.filter((n) => n !== name) : [...selected, name])
  return (
    <div className="tool-picker" data-testid="tool-picker">
      <div className="row">
        <input type="search" placeholder="Filter tools" aria-label="Filter tools" value={filter} onChange={(e) => setFilter(e.target.value)} />
        <button type="button" onClick={() => onChange(Array.from(new Set([...selected, ...shown.map((t) => t.name)])))}>
          Select shown
        </button>
        <button type="button" onClick={() => onChange([])}>
          Clear
        </button>
        <span className="muted">{selected.length} selected</span>
      </div>
      <ul className="tool-options">
        {shown.map((tool) => (
          <li key={tool.name} className={selected.includes(tool.name) ? 'selected' : ''}>
            <label>
              <input type="checkbox" checked={selected.includes(tool.name)} onChange={() => toggle(tool.name)} aria-label={`use ${tool.name}`} />
              <span className="tool-name">{tool.name}</span>
              <span className="method">{tool.method}</span>
            </label>
            <div className="tool-description">{tool.description}</div>
            <button type="button" className="link" onClick={() => setExpanded(expanded === tool.name ? null : tool.name)}>
              {expanded === tool.name ? 'hide parameters' : `parameters (${Object.keys(tool.parameters).length})`}
            </button>
            {expanded === tool.name && <ToolParameters tool={tool} />}
          </li>
        ))}
        {shown.length === 0 && <li className="muted">no tool matches “{filter}”</li>}
      </ul>
    </div>
  )
}
