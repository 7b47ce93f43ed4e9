// Past single-shot inputs, kept in localStorage (newest first, duplicates merged).
import type { PipelineRequest } from '../api/types'

const KEY = 'dt.singleShot.history'
const LIMIT = 20

export interface PastInput extends PipelineRequest {
  at: string
}

export function loadHistory(): PastInput[] {
  try {
    const raw = localStorage.getItem(KEY)
    const parsed: unknown = raw ? JSON.parse(raw) : []
    return Array.isArray(parsed) ? (parsed as PastInput[]).filter((p) => typeof p?.user_instructions === 'string') : []
  } catch {
    return []
  }
}

export function remember(input: PipelineRequest, now = new Date()): PastInput[] {
  const same = (p: PipelineRequest) =>
    p.user_instructions === input.user_instructions && p.tool_ids.join(',') === input.tool_ids.join(',')
  const next = [{ ...input, at: now.toISOString() }, ...loadHistory().filter((p) => !same(p))].slice(0, LIMIT)
  try {
    localStorage.setItem(KEY, JSON.stringify(next))
  } catch {
    /* storage full or disabled: history is a convenience */
  }
  return next
}

export function clearHistory(): void {
  localStorage.removeItem(KEY)
}
