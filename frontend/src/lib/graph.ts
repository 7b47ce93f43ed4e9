// A workflow's graph (raw document or the backend's parsed form) as nodes and edges, laid out
// top to bottom with dagre. Pure: used by the editor preview and the run view.
import { Graph, layout } from '@dagrejs/dagre'

export interface GraphNode {
  id: string
  kind: string
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

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

export function nodeKind(node: Obj): string {
  if (typeof node.type === 'string') return node.type
  if ('call' in node) return 'call'
  if ('workflow' in node) return 'workflow'
  if ('branches' in node) return 'parallel'
  if ('step' in node || 'items' in node) return 'foreach'
  if ('on' in node) return 'branch'
  if ('expects' in node) return 'yield'
  if ('steps' in node) return 'compensate'
  return 'call'
}

function describe(kind: string, node: Obj): string {
  switch (kind) {
    case 'call':
      return String(node.call ?? '')
    case 'workflow':
      return `↳ ${String(node.workflow ?? '')}`
    case 'parallel':
      return isObj(node.branches) ? `‖ ${Object.keys(node.branches).join(', ')}` : 'parallel'
    case 'foreach': {
      const step = isObj(node.step) ? node.step : {}
      const what = String(step.call ?? step.workflow ?? 'step')
      return `each ${String(node.as ?? 'item')}: ${what}`
    }
    case 'yield':
      return isObj(node.expects) ? `asks ${Object.keys(node.expects).join(', ')}` : 'waits for input'
    case 'compensate':
      return Array.isArray(node.steps)
        ? `undo: ${node.steps.map((s) => (isObj(s) ? String(s.call ?? '') : '')).join(', ')}`
        : 'compensate'
    case 'error':
      return 'fails the run'
    case 'branch':
      return 'chooses a path'
    default:
      return ''
  }
}

function list(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String)
  if (typeof value === 'string' && value) return [value]
  return []
}

/** Nodes and edges of one workflow's `graph` mapping. Unknown targets are left out. */
export function buildGraph(graph: unknown): WorkflowGraph {
  if (!isObj(graph)) return { nodes: [], edges: [] }
  const nodes: GraphNode[] = []
  const edges: GraphEdge[] = []
  const ids = new Set(Object.keys(graph))
  const add = (source: string, target: string, kind: EdgeKind, label?: string) => {
    if (!ids.has(source) || !ids.has(target)) return
    const id = `${source}->${target}:${kind}:${edges.length}`
    edges.push({ id, source, target, kind, label })
  }
  for (const [id, raw] of Object.entries(graph)) {
    const node = isObj(raw) ? raw : {}
    const kind = nodeKind(node)
    nodes.push({ id, kind, detail: describe(kind, node) })
    for (const dep of list(node.depends_on)) add(dep, id, 'depends')
    if (kind === 'branch') {
      for (const c of Array.isArray(node.on) ? node.on : []) {
        if (!isObj(c) || typeof c.goto !== 'string') continue
        add(id, c.goto, 'branch', typeof c.when === 'string' ? c.when : 'default')
      }
      if (typeof node.default === 'string') add(id, node.default, 'branch', 'default')
    }
    const onError = isObj(node.on_error) ? node.on_error : isObj(node.step) && isObj(node.step.on_error) ? node.step.on_error : null
    if (onError && typeof onError.fallback === 'string') add(id, onError.fallback, 'fallback', 'fallback')
    if (typeof node.on_partial_failure === 'string') add(id, node.on_partial_failure, 'failure', 'on failure')
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
