// A list of objects as a table (columns from its keys); `pick` adds a radio column to choose
// one row, for the options of a yield.
import { cellText, columnsOf, type Row } from '../lib/table'

interface Pick {
  name: string
  selected: number | null
  onSelect: (index: number) => void
  labels?: string[]
}

export function DataTable({ rows, pick, testId }: { rows: Row[]; pick?: Pick; testId?: string }) {
  const columns = columnsOf(rows)
  return (
    <div className="table-scroll">
      <table className="data-table" data-testid={testId}>
        <thead>
          <tr>
            {pick && <th aria-label="choose" />}
            {pick?.labels && <th>option</th>}
            {columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr
              key={i}
              className={pick && pick.selected === i ? 'picked' : undefined}
              onClick={pick ? () => pick.onSelect(i) : undefined}
            >
              {pick && (
                <td data-label="choose">
                  <input
                    type="radio"
                    name={pick.name}
                    aria-label={pick.labels?.[i] ?? `row ${i + 1}`}
                    checked={pick.selected === i}
                    onChange={() => pick.onSelect(i)}
                  />
                </td>
              )}
              {pick?.labels && <td data-label="option">{pick.labels[i]}</td>}
              {columns.map((c) => (
                <td key={c} data-label={c}>{cellText(row[c])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
