import { describe, expect, it } from 'vitest'
import type { components } from '../api/schema'
import { importBlocked } from './CatalogImport'

type Preview = components['schemas']['ImportPreview']
type Conflict = components['schemas']['Conflict']

const problem = (rule: string) => ({ path: 'workflows.0.outputs.x', rule, message: 'refused', line: 3 })

function preview(over: Partial<Preview> & { kind?: string }): Preview {
  const { kind = 'openapi', ...rest } = over
  return {
    catalog: { name: 'shop', title: 'Shop', vendor: null, kind, base_url: null, prefix: null },
    valid: true,
    projected_command_count: 2,
    projected_group_prefixes: [],
    provider_contract_count: 0,
    provider_contracts: [],
    conflicts: [],
    warnings: [],
    violations: [],
    ...rest,
  }
}

const tool: Conflict = {
  tool: 'getPet',
  name: 'getPet',
  kind: 'tool',
  existing: "catalog 'pets'",
  existing_kind: 'catalog',
  existing_name: 'pets',
  overwrite_resolves: false,
  how: "give a tool prefix, or disable or remove catalog 'pets'",
}
const exists: Conflict = { ...tool, tool: undefined, catalog: 'shop', name: 'shop', kind: 'catalog', existing: "catalog 'shop'", existing_name: 'shop', overwrite_resolves: true, how: 'choose overwrite' }
const ready = { stale: false, lenient: false, overwrite: false, operations: 2, workflows: 1 }

describe('importBlocked', () => {
  it('lets a valid preview with a choice and no clash import', () => {
    expect(importBlocked({ preview: preview({}), ...ready })).toBeNull()
  })

  it('says to tick lenient when every problem is a shortcut lenient mode reads', () => {
    const p = preview({ kind: 'arazzo', valid: false, violations: [problem('name_pattern'), problem('schema')], lenient_accepts: 2 })
    expect(importBlocked({ preview: p, ...ready })).toBe(
      'The document uses 2 shortcut(s) strict Arazzo refuses (listed above): tick “lenient (Arazzo)” and preview again.',
    )
    const mixed = preview({ kind: 'arazzo', valid: false, violations: [problem('name_pattern'), problem('unknown_operation')], lenient_accepts: 1 })
    expect(importBlocked({ preview: mixed, ...ready })).toContain('1 of them are shortcuts “lenient (Arazzo)” accepts')
    const other = preview({ valid: false, violations: [problem('no_operations')] })
    expect(importBlocked({ preview: other, ...ready })).toBe('The document has 1 problem(s) (listed above): fix them and preview again.')
  })

  it('asks for a choice, then for the clashes to be settled', () => {
    expect(importBlocked({ preview: preview({}), ...ready, operations: 0 })).toBe('Choose at least one operation.')
    expect(importBlocked({ preview: preview({ kind: 'arazzo' }), ...ready, workflows: 0 })).toBe('Choose at least one workflow.')
    const existing = preview({ conflicts: [exists] })
    expect(importBlocked({ preview: existing, ...ready })).toContain('Catalog shop exists: tick “replace an existing catalog of this name”')
    expect(importBlocked({ preview: existing, ...ready, overwrite: true })).toBeNull()
    const clash = preview({ conflicts: [exists, tool] })
    expect(importBlocked({ preview: clash, ...ready, overwrite: true })).toBe(
      '1 name(s) clash (listed above): choose another tool prefix or catalog name and preview again, or change the other definitions.',
    )
  })

  it('asks for a new preview once the form changed', () => {
    expect(importBlocked({ preview: preview({}), ...ready, stale: true })).toBe('The form changed since this preview: preview again.')
  })
})
