// Browse and search the registered tools: endpoint, description, parameters, hints,
// annotations; and the tool files that did not load.
import { useState } from 'react'
import { api } from '../api/client'
import type { ToolList, ToolSummary } from '../api/types'
import { ErrorBox } from '../components/ErrorBox'
import { ToolParameters } from '../components/ToolParameters'
import { useApi } from '../lib/useApi'

function ToolCard({ tool }: { tool: ToolSummary }) {
  const hints = tool.hints
  const flags = Object.entries(tool.annotations)
    .filter(([, v]) => v)
    .map(([k]) => k.replace('_', '-'))
  return (
    <article className="card tool-card" data-testid={`tool-${tool.name}`}>
      <header className="row spread">
        <h3>{tool.name}</h3>
        <span className="muted">{flags.join(' · ')}</span>
      </header>
      <div className="http-line">
        <span className="method">{tool.method}</span> <code>{tool.endpoint}</code>
      </div>
      <p>{tool.description}</p>
      <ToolParameters tool={tool} />
      {(hints.hint || hints.category || hints.requires?.length || hints.next?.length || hints.outputs?.length) && (
        <dl className="hints">
          {hints.category && (<><dt>category</dt><dd>{hints.category}</dd></>)}
          {hints.requires?.length ? (<><dt>requires</dt><dd>{hints.requires.join(', ')}</dd></>) : null}
          {hints.next?.length ? (<><dt>next</dt><dd>{hints.next.join(', ')}</dd></>) : null}
          {hints.outputs?.length ? (<><dt>outputs</dt><dd>{hints.outputs.join(', ')}</dd></>) : null}
          {hints.hint && (<><dt>hint</dt><dd>{hints.hint}</dd></>)}
        </dl>
      )}
    </article>
  )
}

export function ToolsPage() {
  const [q, setQ] = useState('')
  const list = useApi(() => api<ToolList>('GET', '/tools'), [], 'GET /tools')
  const needle = q.trim().toLowerCase()
  const tools = (list.data?.tools ?? []).filter(
    (t) =>
      !needle ||
      t.name.toLowerCase().includes(needle) ||
      t.description.toLowerCase().includes(needle) ||
      Object.keys(t.parameters).some((p) => p.toLowerCase().includes(needle)) ||
      (t.hints.category ?? '').toLowerCase().includes(needle),
  )
  return (
    <div className="page">
      <div className="row spread">
        <h1>Tools</h1>
        <button type="button" onClick={list.reload}>Refresh</button>
      </div>
      <input type="search" className="wide" placeholder="Search by name, description, parameter or category" aria-label="Search tools" value={q} onChange={(e) => setQ(e.target.value)} />
      <ErrorBox error={list.error} title="Could not load the tools" />
      {list.data && list.data.problems.length > 0 && (
        <div className="error-box" data-testid="tool-problems">
          <div className="error-title">Tool files that did not load</div>
          <ul className="violations">
            {list.data.problems.map((p, i) => (
              <li key={i}>
                <code>{p.file}</code>
                {p.tool ? ` (tool ${String(p.tool)})` : ''}
                {p.field ? `, field ${String(p.field)}` : ''} — {String(p.reason ?? p.message ?? '')}
              </li>
            ))}
          </ul>
        </div>
      )}
      {list.data && <div className="muted">{tools.length} of {list.data.tools.length} tools</div>}
      <div className="tool-grid">
        {tools.map((t) => (
          <ToolCard key={t.name} tool={t} />
        ))}
      </div>
    </div>
  )
}
