// A list of objects as a table (columns from its keys); `pick` adds a radio column to choose
// one row, for the options of a yield. A table wider than its card scrolls inside it, says so
// (a visible cue, and a fade at the edge that has more) and takes keyboard focus to scroll.
import { useEffect, useRef, useState } from 'react'
import { cellText, columnsOf, type Row } from '../lib/table'

interface Pick {
  name: string
  selected: number | null
  onSelect: (index: number) => void
  labels?: string[]
}

export function DataTable({ rows, pick, testId }: { rows: Row[]; pick?: Pick; testId?: string }) {
  const columns = columnsOf(rows)
  const box = useRef<HTMLDivElement>(null)
  const [more, setMore] = useState<{ left: boolean; right: boolean } | null>(null)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const measure = () => {
      const wide = el.scrollWidth > el.clientWidth + 1
      setMore(wide ? { left: el.scrollLeft > 1, right: el.scrollLeft + el.clientWidth < el.scrollWidth - 1 } : null)
    }
    measure()
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(measure)
    observer?.observe(el)
    el.addEventListener('scroll', measure, { passive: true })
    return () => {
      observer?.disconnect()
      el.removeEventListener('scroll', measure)
    }
  }, [rows.length, columns.length])
  const fade = more ? `${more.left ? ' more-left' : ''}${more.right ? ' more-right' : ''}` : ''
  return (
    <div className="table-frame">
      {more && (
        <div className="scroll-cue" data-testid="scroll-cue">
          {columns.length + (pick?.labels ? 1 : 0)} columns: scroll sideways for the rest <span aria-hidden="true">⇆</span>
        </div>
      )}
      <div
        ref={box}
        className={`table-scroll${fade}`}
        tabIndex={more ? 0 : undefined}
        role={more ? 'region' : undefined}
        aria-label={more ? 'table, scrolls sideways' : undefined}
      >
        <table className="data-table" data-testid={testId}>
          <thead>
            <tr>
              {pick && <th><span className="sr-only">choose</span></th>}
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
    </div>
  )
}
