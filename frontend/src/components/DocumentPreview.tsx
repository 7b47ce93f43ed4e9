// The graph preview of the document being edited (before saving): one workflow of the document
// at a time, read from the editor's text; the last readable version stays while typing.
import { useMemo, useRef, useState } from 'react'
import { readDocument, type DocFormat } from '../lib/documents'
import { buildGraph } from '../lib/graph'
import { EdgeLegend, WorkflowGraphView } from './WorkflowGraphView'

interface Props {
  content: string
  format: DocFormat
  preferred: string | null
  fallbackGraph?: unknown
}

export function DocumentPreview({ content, format, preferred, fallbackGraph }: Props) {
  const read = useMemo(() => readDocument(content, format), [content, format])
  const lastGood = useRef(read)
  if (!read.error) lastGood.current = read
  const shown = read.error ? lastGood.current : read
  const ids = Object.keys(shown.workflows)
  const [choice, setChoice] = useState<string | null>(null)
  const current = choice && ids.includes(choice) ? choice : preferred && ids.includes(preferred) ? preferred : (ids[0] ?? null)
  const graph = useMemo(() => {
    const source = current ? shown.workflows[current]?.graph : format === 'xml' ? fallbackGraph : undefined
    return buildGraph(source)
  }, [shown, current, format, fallbackGraph])

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
      {read.error && <div className="muted small">preview: {read.error}{ids.length ? ' (showing the last readable version)' : ''}</div>}
      <WorkflowGraphView graph={graph} height={380} />
      <EdgeLegend />
    </div>
  )
}
