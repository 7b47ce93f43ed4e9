import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { buildGraph, layoutGraph } from './graph'

const DOC = `
graph:
  search: { call: search_flights, output: flights }
  check: { call: check_availability, depends_on: [search] }
  decide:
    type: branch
    depends_on: [check]
    on:
      - when: "$a > 0"
        goto: reserve
      - default:
        goto: waitlist
  reserve:
    call: create_booking
    on_error: { retry: 2, fallback: fail_booking }
  waitlist: { call: add_to_waitlist }
  fail_booking: { type: error, message: no }
  both:
    type: parallel
    branches: { a: { call: x }, b: { call: y } }
    on_partial_failure: undo
  undo: { type: compensate, steps: [{ call: cancel_booking }] }
  loop: { type: foreach, items: "$xs", as: x, step: { call: z }, depends_on: [ghost] }
`

describe('buildGraph', () => {
  const g = buildGraph(parse(DOC).graph)
  const edge = (s: string, t: string) => g.edges.find((e) => e.source === s && e.target === t)

  it('infers kinds and describes nodes', () => {
    const kinds = Object.fromEntries(g.nodes.map((n) => [n.id, n.kind]))
    expect(kinds).toMatchObject({ search: 'call', decide: 'branch', both: 'parallel', undo: 'compensate', loop: 'foreach', fail_booking: 'error' })
    expect(g.nodes.find((n) => n.id === 'both')?.detail).toBe('‖ a, b')
    expect(g.nodes.find((n) => n.id === 'loop')?.detail).toBe('each x: z')
  })

  it('draws dependencies, branch cases (with the raw default form), fallbacks and failure targets', () => {
    expect(edge('search', 'check')?.kind).toBe('depends')
    expect(edge('decide', 'reserve')).toMatchObject({ kind: 'branch', label: '$a > 0' })
    expect(edge('decide', 'waitlist')).toMatchObject({ kind: 'branch', label: 'default' })
    expect(edge('reserve', 'fail_booking')?.kind).toBe('fallback')
    expect(edge('both', 'undo')?.kind).toBe('failure')
  })

  it('leaves out edges to unknown nodes and accepts the parsed default field', () => {
    expect(g.edges.some((e) => e.source === 'ghost')).toBe(false)
    const parsed = buildGraph({ d: { type: 'branch', on: [], default: 'w' }, w: { call: 't' } })
    expect(parsed.edges).toEqual([expect.objectContaining({ source: 'd', target: 'w', label: 'default' })])
  })

  it('lays nodes out top to bottom', () => {
    const pos = layoutGraph(g)
    expect(pos.get('check')!.y).toBeGreaterThan(pos.get('search')!.y)
    expect(pos.get('decide')!.y).toBeGreaterThan(pos.get('check')!.y)
  })

  it('returns nothing for something that is not a graph', () => {
    expect(buildGraph(null)).toEqual({ nodes: [], edges: [] })
    expect(buildGraph([1, 2])).toEqual({ nodes: [], edges: [] })
  })
})
