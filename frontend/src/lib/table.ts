// Arrays of objects as tables: which values are rows, which keys are columns, and how a cell
// reads. Used by the picker of a yield's choices and by every JSON view (with a JSON toggle).

/** At most this many columns (the rest stay in the JSON view). */
export const MAX_COLUMNS = 8

export type Row = Record<string, unknown>

/** The value as table rows when it is a non-empty list of plain objects, else null. */
export function asRows(value: unknown): Row[] | null {
  if (!Array.isArray(value) || value.length === 0) return null
  return value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v)) ? (value as Row[]) : null
}

/** Keys in first-seen order, scalar-valued keys first, at most `max`. */
export function columnsOf(rows: Row[], max = MAX_COLUMNS): string[] {
  const seen: string[] = []
  for (const row of rows) for (const key of Object.keys(row)) if (!seen.includes(key)) seen.push(key)
  const scalar = (k: string) => rows.every((r) => r[k] === null || r[k] === undefined || typeof r[k] !== 'object')
  return [...seen.filter(scalar), ...seen.filter((k) => !scalar(k))].slice(0, max)
}

/** A cell's text: scalars as they are, objects as compact JSON, missing as empty. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}
