import type { components } from './schema'

// The backend's answers, from the server's OpenAPI document (schema.d.ts, `make api-types`);
// the fields the backend declares free-form (JSON Schema fragments, hints, auth views) are read
// here with the UI's narrower types, on top of the generated ones.
type Schemas = components['schemas']

/** A tool parameter: its JSON Schema plus `in` and `required` (free-form in the document). */
export interface ToolParameter {
  type?: string
  description?: string
  in: string
  required: boolean
  format?: string
  enum?: unknown[]
  [key: string]: unknown
}

/** How a tool authenticates; for a secret, whether it is set now (never the value). */
export interface ToolAuth {
  type: 'none' | 'api_key' | 'bearer' | 'basic'
  in?: 'header' | 'query'
  name?: string
  username?: string
  secret?: string
  set?: boolean
  set_with?: string
}

/** A tool in a list (GET /tools), its free-form fields read with the UI's types. */
export type ToolSummary = Schemas['ToolSummary'] & {
  parameters: Record<string, ToolParameter>
  hints: { category?: string; requires?: string[]; outputs?: string[]; next?: string[]; hint?: string }
  annotations: { read_only?: boolean; destructive?: boolean; idempotent?: boolean; open_world?: boolean }
  auth: ToolAuth
}

export type ToolList = Omit<Schemas['ToolList'], 'tools'> & { tools: ToolSummary[] }

export type StageName = NonNullable<Schemas['WorkflowResponse']['error_stage']>

/** POST /workflow: the single-shot pipeline's request. */
export type PipelineRequest = Schemas['WorkflowRequest']

/** The pipeline's answer, its free-form request and response read with the UI's types. */
export type PipelineResponse = Schemas['WorkflowResponse'] &
  Required<Pick<Schemas['WorkflowResponse'], 'timings_ms' | 'warnings' | 'usage'>> & {
  http_spec?: { method: string; url: string; headers?: Record<string, string>; body?: unknown; params?: unknown } | null
  raw_response?: {
    status_code: number
    headers?: Record<string, string>
    body?: unknown
    execution_time_ms?: number
  } | null
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


/** A workflow in a list (its params: the workflow's free-form specs, read as {@link ParamSpec}). */
export type WorkflowSummary = Schemas['WorkflowSummary']

export type WorkflowList = Schemas['WorkflowList']

/** A workflow's document (content, format, version), parsed form, graph as drawn and violations. */
export type WorkflowDetail = Schemas['WorkflowDetail']

/** One parameter of a workflow (GET /workflows/{id}/inputs). */
export type InputParam = Schemas['InputParam']

/** One node of a workflow's graph as the server draws it (kind, label, what it hands over to). */
export type DrawnNode = Schemas['DrawnNode']

export type RunStatus = Schemas['RunSummary']['status']

export type NodeStatus = Schemas['NodeState']['status']

/** The type names of the engine's run events (a closed set). */
export type RunEventType = Schemas['RunEvent']['type']

/** One node of a run (status, input, output, error, attempts, timings, detail). */
export type RunNode = Schemas['NodeState']

/** A run in a list. */
export type RunSummary = Schemas['RunSummary']

export type RunErrorSummary = Schemas['RunErrorSummary']

export type RunList = Schemas['RunList']

/** The yield a run waits on. */
export type Waiting = Schemas['WaitingPrompt']

/** One run in full (GET /runs/{run_id}). */
export type RunDetail = Schemas['RunState']

/** One run event as streamed: one of the engine's event classes, told apart by `type`. */
export type RunEvent = Schemas['RunEvent']

type UnionKeys<T> = T extends unknown ? keyof T : never
type FieldOf<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? T[K] : undefined) : never

/** Any run event's fields, each possibly absent: for code that reads them whatever the type. */
export type RunEventFields = { [K in UnionKeys<RunEvent>]?: FieldOf<RunEvent, K> }

/** `e`'s fields as {@link RunEventFields} (a field the event's class lacks reads as undefined). */
export function eventFields(e: RunEvent): RunEventFields {
  return e as RunEventFields
}

export const TERMINAL_RUN: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled'])
