// The options a yield offers for one field (`choices` in the workflow), as a table to pick
// from: each option's label and, when options are objects, their fields.
import type { ChoiceOption } from '../api/types'
import { DataTable } from './DataTable'

interface Props {
  id: string
  name: string
  options: ChoiceOption[]
  value: string
  onChange: (text: string) => void
}

export function OptionPicker({ id, name, options, value, onChange }: Props) {
  const selected = options.findIndex((o) => String(o.value) === value)
  const rows = options.map((o) => (o.item && typeof o.item === 'object' ? o.item : { value: o.value }))
  return (
    <div className="option-picker" id={id} role="radiogroup" aria-label={name} data-testid={`options-${name}`}>
      <DataTable
        rows={rows}
        pick={{
          name,
          selected: selected >= 0 ? selected : null,
          onSelect: (i) => onChange(String(options[i].value)),
          labels: options.map((o) => o.label),
        }}
      />
      <div className="muted small">{selected >= 0 ? `chosen: ${options[selected].label}` : `${options.length} options: pick one`}</div>
    </div>
  )
}
