// Choose the candidate tools of a single-shot request; each shows its description and,
// when expanded, its parameters. The filter shows the closest matches — the tool of that exact
// name, else the tools whose names contain it, else those whose descriptions do — with the
// others a click away; "Select shown" selects exactly the tools in the list.
import { useState } from 'react'
import type { ToolSummary } from '../api/types'
import { ToolParameters } from './ToolParameters'

interface Props {
  tools: ToolSummary[]
  selected: string[]
  onChange: (ids: string[]) => void
}

export type ToolMatch = 'name' | 'description'

export interface Filtered {
  /** The tools listed, each with where the filter matched it. */
  shown: { tool: ToolSummary; match: ToolMatch | null }[]
  /** How many more tools match less closely (listed once `all` is asked for). */
  more: number
}

/** The tools a filter lists: the closest kind of match only, unless `all` matches are asked for. */
export function filterTools(tools: ToolSummary[], filter: string, all = false): Filtered {
  const needle = filter.trim().toLowerCase()
  if (!needle) return { shown: tools.map((tool) => ({ tool, match: null })), more: 0 }
  const exact = tools.filter((t) => t.name.toLowerCase() === needle)
  const byName = tools.filter((t) => t.name.toLowerCase().includes(needle))
  const byDescription = tools.filter((t) => !t.name.toLowerCase().includes(needle) && t.description.toLowerCase().includes(needle))
  const every = [...byName.map((tool) => ({ tool, match: 'name' as const })), ...byDescription.map((tool) => ({ tool, match: 'description' as const }))]
  const closest = exact.length ? exact.length : byName.length ? byName.length : every.length
  return all ? { shown: every, more: 0 } : { shown: every.slice(0, closest), more: every.length - closest }
}

export function ToolPicker({ tools, selected, onChange }: Props) {
  const [filter, setFilter] = useState('')
  const [expanded, setExpanded] = useState<string | null>(null)
  const [all, setAll] = useState(false)
  const { shown: matches, more } = filterTools(tools, filter, all)
  const shown = matches.map((m) => m.tool)
  const toggle = (name: string) =>
    onChange(selected.includes(name) ? selected.filter((n) => n !== name) : [...selected, name])
  return (
    <div className="tool-picker" data-testid="tool-picker">
      <div className="row">
        <input type="search" placeholder="Filter tools" aria-label="Filter tools" value={filter} onChange={(e) => {
            setFilter(e.target.value)
            setAll(false)
          }} />
        <button type="button" onClick={() => onChange(Array.from(new Set([...selected, ...shown.map((t) => t.name)])))}>
          Select shown{filter.trim() ? ` (${shown.length})` : ''}
        </button>
        <button type="button" onClick={() => onChange([])}>
          Clear
        </button>
        <span className="muted">{selected.length} selected</span>
      </div>
      <ul className="tool-options">
        {matches.map(({ tool, match }) => (
          <li key={tool.name} className={selected.includes(tool.name) ? 'selected' : ''} data-match={match ?? undefined}>
            <label>
              <input type="checkbox" checked={selected.includes(tool.name)} onChange={() => toggle(tool.name)} aria-label={`use ${tool.name}`} />
              <span className="tool-name">{tool.name}</span>
              <span className="method">{tool.method}</span>
              {match === 'description' && <span className="muted small match-note">matched in its description</span>}
            </label>
            <div className="tool-description">{tool.description}</div>
            <button type="button" className="link" onClick={() => setExpanded(expanded === tool.name ? null : tool.name)}>
              {expanded === tool.name ? 'hide parameters' : `parameters (${Object.keys(tool.parameters).length})`}
            </button>
            {expanded === tool.name && <ToolParameters tool={tool} />}
          </li>
        ))}
        {shown.length === 0 && <li className="muted">no tool matches “{filter}”</li>}
        {more > 0 && (
          <li className="muted" data-testid="more-matches">
            {more} more tool(s) match “{filter.trim()}” less closely (in the name or description).{' '}
            <button type="button" className="link" onClick={() => setAll(true)}>Show them</button>
          </li>
        )}
      </ul>
    </div>
  )
}
