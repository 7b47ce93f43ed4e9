import type { components } from './schema'

// Shapes of the backend's answers (see README "Workflows and runs" and "/tools").

export interface ToolParameter {
  type?: string
  description?: string
  in: string
  required: boolean
  format?: string
  enum?: unknown[]
  [key: string]: unknown
}

export interface ToolSummary {
  name: string
  description: string
  method: string
  endpoint: string
  parameters: Record<string, ToolParameter>
  hints: { category?: string; requires?: string[]; outputs?: string[]; next?: string[]; hint?: string }
  annotations: { read_only?: boolean; destructive?: boolean; idempotent?: boolean; open_world?: boolean }
  /** How it authenticates; for a secret, whether it is set now (never the value). */
  auth: ToolAuth
}

export interface ToolAuth {
  type: 'none' | 'api_key' | 'bearer' | 'basic'
  in?: 'header' | 'query'
  name?: string
  username?: string
  secret?: string
  set?: boolean
  set_with?: string
}

export interface FileProblem {
  file: string
  line?: number | null
  message?: string
  violations?: { path?: string; message: string; line?: number | null }[]
  [key: string]: unknown
}

export interface ToolList {
  tools: ToolSummary[]
  problems: FileProblem[]
}

export type StageName =
  | 'tool_retrieval'
  | 'tool_context_generation'
  | 'llm_selection'
  | 'api_execution'
  | 'result_sql'
  | 'response_formatting'

export interface PipelineRequest {
  user_instructions: string
  tool_ids: string[]
  format_response: boolean
  response_format_instructions?: string | null
}

export interface PipelineResponse {
  status: 'success' | 'error'
  selected_tool: string | null
  arguments?: Record<string, unknown> | null
  http_spec: { method: string; url: string; headers?: Record<string, string>; body?: unknown; params?: unknown } | null
  raw_response: {
    status_code: number
    headers?: Record<string, string>
    body?: unknown
    execution_time_ms?: number
  } | null
  formatted_response: string | null
  error: string | null
  error_stage: StageName | null
  warnings: string[]
  timings_ms: Partial<Record<StageName | 'total', number>>
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; llm_calls: number }
}

export interface ParamSpec {
  type?: string
  required?: boolean
  default?: unknown
  example?: unknown
  description?: string
  format?: string
  enum?: unknown[]
  /** A paused yield's offered choices (from `choices` in the workflow). */
  options?: ChoiceOption[]
}

/** One option a yield offers: the answer, what people read, and the element it came from. */
export interface ChoiceOption {
  value: string | number | boolean | null
  label: string
  item?: Record<string, unknown>
}

export interface WorkflowSummary {
  id: string
  title?: string | null
  description?: string | null
  domain?: string
  file: string
  format: 'yaml' | 'json' | 'xml'
  version: string
  params: Record<string, ParamSpec>
  valid: boolean
  errors: number
}

export interface WorkflowList {
  workflows: WorkflowSummary[]
  problems: FileProblem[]
}

export interface WorkflowDetail extends WorkflowSummary {
  content: string
  parsed: { graph?: Record<string, unknown>; params?: Record<string, ParamSpec> } | null
  /** Its graph as drawn: each node's kind and label come from the server's node kinds. */
  nodes: DrawnNode[]
  document_workflows: string[]
  violations: import('./client').Violation[]
}

export interface InputParam {
  name: string
  type: string
  json_type: string
  required: boolean
  default: unknown
  example: unknown
  description: string | null
  format: string | null
  enum: unknown[] | null
}

// Generated from the server's OpenAPI document (schema.d.ts, `make api-types`).
type Schemas = components['schemas']

/** One node of a workflow's graph as the server draws it (kind, label, what it hands over to). */
export type DrawnNode = Schemas['DrawnNode']

export type RunStatus = Schemas['RunSummary']['status']

export type NodeStatus = Schemas['NodeView']['status']

/** The type names of the engine's run events (a closed set). */
export type RunEventType = Schemas['RunEvent']['type']

export interface RunNode {
  status: NodeStatus
  kind: string | null
  input: unknown
  output: unknown
  error: string | null
  attempts: number
  started_at: string | null
  ended_at: string | null
  duration_ms: number | null
  detail: Record<string, unknown>
}

export interface RunSummary {
  run_id: string
  workflow_id: string
  status: RunStatus
  created_at: string
  started_at: string | null
  finished_at: string | null
  duration_ms: number | null
  /** Why it failed, in short (the failed call's status and the API's own words). */
  error?: RunErrorSummary | null
  /** The failed run whose succeeded outputs this run reuses (a redrive). */
  redrive_of?: string | null
  /** Who started it: a principal id (`admin`, `key:<id>`, `oauth:<sub>`); absent on older servers. */
  owner?: string | null
}

export type RunErrorSummary = Schemas['RunErrorSummary']

export interface RunList {
  runs: RunSummary[]
  total: number
  limit: number
  offset: number
}

export interface Waiting {
  node_id: string
  message: string
  expects: Record<string, ParamSpec | string>
}

export interface RunDetail extends Omit<RunSummary, 'error'> {
  document_version: string | null
  params: Record<string, unknown>
  nodes: Record<string, RunNode>
  result: unknown
  error: { message?: string; node_id?: string; [key: string]: unknown } | null
  waiting: Waiting | null
  updated_at: string
  event_count: number
}

export interface RunEvent {
  type: RunEventType
  position: number
  seq: number
  at: string
  run_id: string
  node_id?: string
  [key: string]: unknown
}

export const TERMINAL_RUN: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled'])
