// A workflow's DAG drawn with React Flow, laid out by dagre; nodes coloured by their run state
// when `statuses` is given. Clicking a node, or Enter / Space on a focused one, selects it. The
// default view never zooms out below 1, so node text stays at its CSS size (12 px or more); a
// graph larger than its box is panned or zoomed out by the user.
import { Background, Controls, Handle, MarkerType, Position, ReactFlow, type Edge, type Node, type NodeProps } from '@xyflow/react'
import '@xyflow/react/dist/style.css'
import { useMemo, type KeyboardEvent } from 'react'
import { layoutGraph, NODE_HEIGHT, NODE_WIDTH, type WorkflowGraph } from '../lib/graph'
import { statusColor, statusTextColor } from './StatusBadge'

interface StepData extends Record<string, unknown> {
  id: string
  kind: string
  detail: string
  status: string | null
  note: string | null
  badge: string | null
  selected: boolean
}

function StepNode({ data }: NodeProps<Node<StepData>>) {
  const color = data.status ? statusColor(data.status) : 'var(--border)'
  return (
    <div
      className={`graph-node${data.selected ? ' graph-node-selected' : ''}${data.badge ? ' graph-node-badged' : ''}`}
      style={{ borderColor: color, background: data.status ? `color-mix(in srgb, ${color} 14%, var(--card))` : 'var(--card)' }}
      data-testid={`graph-node-${data.id}`}
      data-status={data.status ?? 'none'}
      title={data.status ? `${data.id}: ${data.status}` : data.id}
    >
      <Handle type="target" position={Position.Top} />
      <div className="graph-node-head">
        <span className="graph-node-id">{data.id}</span>
        <span className="graph-node-kind">{data.kind}</span>
        {data.badge && <span className="graph-node-badge" data-testid={`graph-badge-${data.id}`}>{data.badge}</span>}
      </div>
      <div className="graph-node-detail">{data.detail}</div>
      {(data.status || data.note) && (
        <div className="graph-node-status" style={{ color: data.status ? statusTextColor(data.status) : color }}>
          {data.status?.replace('_', ' ')}
          {data.note ? ` · ${data.note}` : ''}
        </div>
      )}
      <Handle type="source" position={Position.Bottom} />
    </div>
  )
}

const NODE_TYPES = { step: StepNode }
const EDGE_COLORS = { depends: 'var(--muted)', branch: 'var(--status-running)', fallback: 'var(--status-failed)', failure: 'var(--status-waiting_input)' }

interface Props {
  graph: WorkflowGraph
  statuses?: Record<string, string>
  notes?: Record<string, string>
  /** A short mark on a node (a redrive's "reused"). */
  badges?: Record<string, string>
  selected?: string | null
  onSelect?: (id: string) => void
  height?: number
}

export function WorkflowGraphView({ graph, statuses, notes, badges, selected, onSelect, height = 420 }: Props) {
  const { nodes, edges, bottom } = useMemo(() => {
    const positions = layoutGraph(graph)
    const nodes: Node<StepData>[] = graph.nodes.map((n) => ({
      id: n.id,
      type: 'step',
      position: { x: positions.get(n.id)?.x ?? 0, y: positions.get(n.id)?.y ?? 0 },
      data: {
        id: n.id,
        kind: n.kind,
        detail: n.detail,
        status: statuses ? (statuses[n.id] ?? 'not_run') : null,
        note: notes?.[n.id] ?? null,
        badge: badges?.[n.id] ?? null,
        selected: selected === n.id,
      },
      width: NODE_WIDTH,
      height: NODE_HEIGHT,
      draggable: false,
      ariaLabel: `${n.id}, ${n.kind}${statuses ? `, ${(statuses[n.id] ?? 'not_run').replace('_', ' ')}` : ''}`,
    }))
    const edges: Edge[] = graph.edges.map((e) => ({
      id: e.id,
      source: e.source,
      target: e.target,
      label: e.label,
      animated: statuses ? statuses[e.source] === 'running' : false,
      style: { stroke: EDGE_COLORS[e.kind], strokeDasharray: e.kind === 'depends' ? undefined : '6 4' },
      labelStyle: { fontSize: 12, fill: EDGE_COLORS[e.kind] },
      labelBgStyle: { fill: 'var(--card)' },
      markerEnd: { type: MarkerType.ArrowClosed, color: EDGE_COLORS[e.kind] },
    }))
    const bottom = Math.max(0, ...nodes.map((n) => n.position.y + NODE_HEIGHT))
    return { nodes, edges, bottom }
  }, [graph, statuses, notes, badges, selected])

  // A new structure (nodes or edges) mounts a new view, fitted to it; state changes do not.
  const structure = useMemo(() => [...graph.nodes.map((n) => n.id), '|', ...graph.edges.map((e) => e.id)].join(','), [graph])
  if (graph.nodes.length === 0) return <div className="graph-empty muted">no nodes to draw</div>
  return (
    // at zoom 1 a tall graph needs a taller box (up to a screen's worth; then it is panned)
    <div className="graph" style={{ height: Math.max(height, Math.min(bottom * 1.15 + 40, 960)) }} data-testid="workflow-graph">
      <ReactFlow
        key={structure}
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        fitView
        fitViewOptions={{ padding: 0.15, minZoom: 1, maxZoom: 1.1 }}
        nodesConnectable={false}
        elementsSelectable={!!onSelect}
        onNodeClick={(_, node) => onSelect?.(node.id)}
        onKeyDown={(event: KeyboardEvent<HTMLDivElement>) => {
          // Enter or Space on a focused node opens it, as a click does
          const target = event.target as HTMLElement
          if (!onSelect || (event.key !== 'Enter' && event.key !== ' ') || !target.classList.contains('react-flow__node')) return
          const id = target.dataset.id
          if (!id) return
          event.preventDefault()
          onSelect(id)
        }}
        proOptions={{ hideAttribution: true }}
        minZoom={0.2}
      >
        <Background gap={16} color="var(--graph-dot)" />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  )
}

export function EdgeLegend() {
  return (
    <div className="legend">
      <span className="legend-item"><span className="legend-line" style={{ borderColor: EDGE_COLORS.depends }} />depends on</span>
      <span className="legend-item"><span className="legend-line dashed" style={{ borderColor: EDGE_COLORS.branch }} />branch</span>
      <span className="legend-item"><span className="legend-line dashed" style={{ borderColor: EDGE_COLORS.fallback }} />fallback</span>
      <span className="legend-item"><span className="legend-line dashed" style={{ borderColor: EDGE_COLORS.failure }} />on failure</span>
    </div>
  )
}
