// Pure readings of a run: retries of a node, the failure to point at, event classes.
import { eventFields, type RunDetail, type RunEvent, type RunEventType, type RunNode } from '../api/types'
import { apiSaid } from './format'

export interface RetryInfo {
  attempt: number
  max: number | null
  lastError: string | null
  nextAttempt: number | null
  nextAt: string | null
}

/** Attempts made (of max), the last error, and the next attempt while its retry is ahead. */
export function retryInfo(node: RunNode, now: number = Date.now()): RetryInfo | null {
  const d = node.detail ?? {}
  const max = typeof d.max_attempts === 'number' ? d.max_attempts : null
  if (!max && node.attempts <= 1) return null
  const nextAt = typeof d.next_attempt_at === 'string' ? d.next_attempt_at : null
  const next = typeof d.next_attempt === 'number' ? d.next_attempt : null
  const ahead = nextAt !== null && next !== null && node.status === 'running' && new Date(nextAt).getTime() > now
  return {
    attempt: ahead ? (next as number) - 1 : node.attempts,
    max,
    lastError: typeof d.last_error === 'string' ? d.last_error : null,
    nextAttempt: ahead ? next : null,
    nextAt: ahead ? nextAt : null,
  }
}

export interface FailureSummary {
  message: string
  /** What the API said about the failed call (status and its own words), when a call failed. */
  apiSaid: string | null
  apiCall: string | null
  nodeId: string | null
  rootCause: { nodeId: string; error: string } | null
  failedNodes: { nodeId: string; error: string }[]
}

/** What the run's error says and which node to look at; the earliest failed node first. */
export function failureSummary(run: RunDetail): FailureSummary | null {
  const failedNodes = Object.entries(run.nodes)
    .filter(([, n]) => n.status === 'failed')
    .sort(([, a], [, b]) => (a.ended_at ?? '').localeCompare(b.ended_at ?? ''))
    .map(([nodeId, n]) => ({ nodeId, error: n.error ?? 'failed' }))
  if (run.status !== 'failed' && !run.error) return null
  const nodeId = typeof run.error?.node_id === 'string' ? run.error.node_id : (failedNodes[0]?.nodeId ?? null)
  const first = failedNodes[0]
  const error = (run.error ?? {}) as Record<string, unknown>
  const cause = (error.cause && typeof error.cause === 'object' ? error.cause : {}) as Record<string, unknown>
  const failedCall = Object.values(run.nodes).find((n) => n.status === 'failed' && typeof n.detail?.api_message === 'string')
  const said =
    apiSaid(error.status_code, error.api_message) ??
    apiSaid(cause.status_code, cause.api_message) ??
    (failedCall ? apiSaid(failedCall.detail?.status_code, failedCall.detail?.api_message) : null)
  const call = error.tool ?? cause.call ?? failedCall?.detail?.tool
  return {
    message: String(run.error?.message ?? 'the run failed'),
    apiSaid: said,
    apiCall: said && typeof call === 'string' ? call : null,
    nodeId,
    rootCause: first && first.nodeId !== nodeId ? first : null,
    failedNodes,
  }
}

const FAILED_TYPES = new Set<RunEventType>(['node_failed', 'attempt_failed', 'run_failed', 'run_cancelled'])
const PENDING_TYPES = new Set<RunEventType>(['waiting_input', 'retry_scheduled'])

export function isFailedEvent(e: RunEvent): boolean {
  return FAILED_TYPES.has(e.type) || (e.type === 'compensated' && e.ok === false)
}

/** Events about what is still open: yields waiting, retries ahead, nodes not finished. */
export function isPendingEvent(e: RunEvent, nodes: Record<string, RunNode>): boolean {
  const nodeId = eventFields(e).node_id
  const node = nodeId ? nodes[nodeId] : undefined
  const open = node ? ['pending', 'running', 'waiting_input'].includes(node.status) : false
  return (PENDING_TYPES.has(e.type) && (open || !node)) || (open && e.type === 'node_started')
}

export function eventSummary(event: RunEvent): string {
  const e = eventFields(event)
  const parts: string[] = []
  if (typeof e.kind === 'string') parts.push(e.kind)
  if (typeof e.attempt === 'number') parts.push(`attempt ${e.attempt}${typeof e.max_attempts === 'number' ? ` of ${e.max_attempts}` : ''}`)
  if (typeof e.next_attempt_at === 'string') parts.push(`next at ${new Date(e.next_attempt_at).toLocaleTimeString()}`)
  if (typeof e.message === 'string') parts.push(e.message)
  if (typeof e.error === 'string') parts.push(e.error)
  else if (e.error && typeof e.error === 'object') parts.push(String((e.error as { message?: string }).message ?? JSON.stringify(e.error)))
  if (typeof e.reason === 'string') parts.push(e.reason)
  if (typeof e.fallback === 'string') parts.push(`fallback → ${e.fallback}`)
  if (e.values && typeof e.values === 'object') parts.push(`answer ${JSON.stringify(e.values)}`)
  if (typeof e.reused_from === 'string') parts.push(`reused from run ${e.reused_from.slice(0, 8)} (not run again)`)
  return parts.join(' · ')
}

/** The earlier run a redrive took this node's output from, or null when the node ran. */
export function reusedFrom(node: RunNode | undefined): string | null {
  const from = node?.detail?.reused_from
  return typeof from === 'string' && from ? from : null
}

/** Node ids that are children (parallel branches, foreach items, sub-workflow steps) of `id`. */
export function childrenOf(nodes: Record<string, RunNode>, id: string): string[] {
  return Object.keys(nodes).filter((k) => k.startsWith(`${id}/`))
}
