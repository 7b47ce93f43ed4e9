import { describe, expect, it } from 'vitest'
import type { DrawnNode } from '../api/types'
import { buildGraph, layoutGraph } from './graph'

const node = (id: string, kind: string, label: string, more: Partial<DrawnNode> = {}): DrawnNode => ({
  id,
  kind,
  label,
  depends_on: [],
  activates: [],
  ...more,
})

// What GET /workflows/{id} answers as `nodes` (the server's node kinds give kind and label).
const DRAWN: DrawnNode[] = [
  node('search', 'call', 'search_flights'),
  node('check', 'call', 'check_availability', { depends_on: ['search'] }),
  node('decide', 'branch', 'branch decide', {
    depends_on: ['check'],
    activates: [
      { target: 'reserve', via: 'branch', when: '$a > 0' },
      { target: 'waitlist', via: 'branch_default', when: null },
      { target: 'search', via: 'loop', when: '$retry' },
    ],
  }),
  node('reserve', 'call', 'create_booking', {
    activates: [{ target: 'fail_booking', via: 'fallback', when: 'the call gave up' }],
  }),
  node('waitlist', 'call', 'add_to_waitlist'),
  node('fail_booking', 'error', 'fail (fail_booking)'),
  node('both', 'parallel', 'parallel(x + y)', {
    activates: [{ target: 'undo', via: 'on_partial_failure', when: 'a branch failed' }],
  }),
  node('undo', 'compensate', 'undo: cancel_booking'),
  node('loop', 'foreach', 'foreach x: z', { depends_on: ['ghost'] }),
]

describe('buildGraph', () => {
  const g = buildGraph(DRAWN)
  const edge = (s: string, t: string) => g.edges.find((e) => e.source === s && e.target === t)

  it('takes each node kind and label from the server', () => {
    const kinds = Object.fromEntries(g.nodes.map((n) => [n.id, n.kind]))
    expect(kinds).toMatchObject({ search: 'call', decide: 'branch', both: 'parallel', undo: 'compensate', loop: 'foreach', fail_booking: 'error' })
    expect(g.nodes.find((n) => n.id === 'both')?.detail).toBe('parallel(x + y)')
    expect(g.nodes.find((n) => n.id === 'loop')?.detail).toBe('foreach x: z')
  })

  it('draws dependencies, branch cases (default and loops too), fallbacks and failure targets', () => {
    expect(edge('search', 'check')?.kind).toBe('depends')
    expect(edge('decide', 'reserve')).toMatchObject({ kind: 'branch', label: '$a > 0' })
    expect(edge('decide', 'waitlist')).toMatchObject({ kind: 'branch', label: 'default' })
    expect(edge('decide', 'search')).toMatchObject({ kind: 'branch', label: '$retry' })
    expect(edge('reserve', 'fail_booking')).toMatchObject({ kind: 'fallback', label: 'fallback' })
    expect(edge('both', 'undo')).toMatchObject({ kind: 'failure', label: 'on failure' })
  })

  it('draws a kind it has never heard of from its kind and label', () => {
    const drawn = buildGraph([
      node('hello', 'note', 'note (hello)', { activates: [{ target: 'next', via: 'handover', when: null }] }),
      node('next', 'call', 't', { depends_on: ['hello'] }),
    ])
    expect(drawn.nodes[0]).toEqual({ id: 'hello', kind: 'note', detail: 'note (hello)' })
    expect(drawn.edges).toEqual([
      expect.objectContaining({ source: 'hello', target: 'next', kind: 'branch', label: 'handover' }),
      expect.objectContaining({ source: 'hello', target: 'next', kind: 'depends' }),
    ])
  })

  it('leaves out edges to unknown nodes', () => {
    expect(g.edges.some((e) => e.source === 'ghost')).toBe(false)
  })

  it('lays nodes out top to bottom', () => {
    const pos = layoutGraph(g)
    expect(pos.get('check')!.y).toBeGreaterThan(pos.get('search')!.y)
    expect(pos.get('decide')!.y).toBeGreaterThan(pos.get('check')!.y)
  })

  it('returns nothing for something that is not a drawn graph', () => {
    expect(buildGraph(null)).toEqual({ nodes: [], edges: [] })
    expect(buildGraph(undefined)).toEqual({ nodes: [], edges: [] })
  })
})
