// A tool's parameters: name, type, where it goes, required, description.
import type { ToolSummary } from '../api/types'

export function ToolParameters({ tool }: { tool: ToolSummary }) {
  const entries = Object.entries(tool.parameters)
  if (entries.length === 0) return <div className="muted">no parameters</div>
  return (
    <table className="params-table">
      <thead>
        <tr>
          <th>parameter</th>
          <th>type</th>
          <th>in</th>
          <th>description</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([name, p]) => (
          <tr key={name}>
            <td>
              <code>{name}</code>
              {p.required && <span className="required" title="required">*</span>}
            </td>
            <td>
              {String(p.type ?? 'any')}
              {p.format ? ` (${String(p.format)})` : ''}
              {Array.isArray(p.enum) ? ` ∈ {${p.enum.map(String).join(', ')}}` : ''}
            </td>
            <td>{p.in}</td>
            <td>{p.description ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
