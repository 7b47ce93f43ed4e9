// A workflow's graph as nodes and edges, laid out top to bottom with dagre. Pure: used by the
// editor preview and the run view. What each node is (its kind and label) and what it hands
// over to come from the server, which asks the node's kind (GET /workflows/{id} `nodes`,
// POST /workflows/validate `graphs`): nothing here knows a node kind, so a kind added on the
// server is drawn without a change here.
import { Graph, layout } from '@dagrejs/dagre'
import type { DrawnNode } from '../api/types'

export interface GraphNode {
  id: string
  kind: string
  /** The node's label, from its kind. */
  detail: string
}

export type EdgeKind = 'depends' | 'branch' | 'fallback' | 'failure'

export interface GraphEdge {
  id: string
  source: string
  target: string
  kind: EdgeKind
  label?: string
}

export interface WorkflowGraph {
  nodes: GraphNode[]
  edges: GraphEdge[]
}

/** How an activation (`via`) is drawn: its edge style, and its label when not its condition. */
const EDGES: Record<string, { kind: EdgeKind; label?: string }> = {
  fallback: { kind: 'fallback', label: 'fallback' },
  on_partial_failure: { kind: 'failure', label: 'on failure' },
  branch_default: { kind: 'branch', label: 'default' },
}

/** Nodes and edges of a workflow's graph as the server drew it. Unknown targets are left out. */
export function buildGraph(drawn: readonly DrawnNode[] | null | undefined): WorkflowGraph {
  if (!Array.isArray(drawn)) return { nodes: [], edges: [] }
  const nodes: GraphNode[] = []
  const edges: GraphEdge[] = []
  const ids = new Set(drawn.map((n) => n.id))
  const add = (source: string, target: string, kind: EdgeKind, label?: string) => {
    if (!ids.has(source) || !ids.has(target)) return
    const id = `${source}->${target}:${kind}:${edges.length}`
    edges.push({ id, source, target, kind, label })
  }
  for (const node of drawn) {
    nodes.push({ id: node.id, kind: node.kind, detail: node.label })
    for (const dep of node.depends_on) add(dep, node.id, 'depends')
    for (const a of node.activates) {
      const style = EDGES[a.via]
      add(node.id, a.target, style?.kind ?? 'branch', style?.label ?? a.when ?? a.via)
    }
  }
  return { nodes, edges }
}

export interface Positioned {
  id: string
  x: number
  y: number
}

export const NODE_WIDTH = 200
export const NODE_HEIGHT = 64

/** Top-left positions of the nodes, top to bottom. */
export function layoutGraph(graph: WorkflowGraph): Map<string, Positioned> {
  const g = new Graph()
  g.setGraph({ rankdir: 'TB', nodesep: 36, ranksep: 56, marginx: 8, marginy: 8 })
  g.setDefaultEdgeLabel(() => ({}))
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT })
  for (const e of graph.edges) g.setEdge(e.source, e.target)
  layout(g)
  const out = new Map<string, Positioned>()
  for (const n of graph.nodes) {
    const p = g.node(n.id) as { x: number; y: number } | undefined
    out.set(n.id, { id: n.id, x: (p?.x ?? 0) - NODE_WIDTH / 2, y: (p?.y ?? 0) - NODE_HEIGHT / 2 })
  }
  return out
}
