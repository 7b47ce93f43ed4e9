// The graph preview of the document being edited (before saving): one workflow of the document
// at a time, as the server drew it when it last checked the editor's text (POST
// /workflows/validate); the last readable version stays while the text does not load.
import { useMemo, useRef, useState } from 'react'
import type { DrawnNode } from '../api/types'
import { buildGraph } from '../lib/graph'
import { EdgeLegend, WorkflowGraphView } from './WorkflowGraphView'

type Graphs = Record<string, DrawnNode[]>

interface Props {
  /** The workflows of the last checked text as drawn (empty: it did not load; null: not checked yet). */
  graphs: Graphs | null
  preferred: string | null
  /** What to show before anything readable was checked (the saved workflow). */
  fallback?: Graphs
}

export function DocumentPreview({ graphs, preferred, fallback }: Props) {
  const readable = graphs !== null && Object.keys(graphs).length > 0
  const lastGood = useRef<Graphs | null>(null)
  if (readable) lastGood.current = graphs
  const shown = lastGood.current ?? fallback ?? {}
  const ids = Object.keys(shown)
  const [choice, setChoice] = useState<string | null>(null)
  const current = choice && ids.includes(choice) ? choice : preferred && ids.includes(preferred) ? preferred : (ids[0] ?? null)
  const graph = useMemo(() => buildGraph(current ? shown[current] : undefined), [shown, current])

  return (
    <div className="document-preview" data-testid="graph-preview">
      <div className="row spread">
        <strong>Graph preview</strong>
        {ids.length > 1 && (
          <select aria-label="Workflow to preview" value={current ?? ''} onChange={(e) => setChoice(e.target.value)}>
            {ids.map((id) => (
              <option key={id} value={id}>{id}</option>
            ))}
          </select>
        )}
      </div>
      {graphs !== null && !readable && (
        <div className="muted small">preview: the document does not load{ids.length ? ' (showing the last readable version)' : ''}</div>
      )}
      <WorkflowGraphView graph={graph} height={380} />
      <EdgeLegend />
    </div>
  )
}
