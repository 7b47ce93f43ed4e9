import type { components } from './schema'

// The backend's answers, from the server's OpenAPI document (schema.d.ts, `make api-types`),
// named for the UI; only UI-side types are written here.
type Schemas = components['schemas']

/** How a tool authenticates; for a secret, whether it is set now (never the value). */
export type ToolAuth = Schemas['ToolAuth']

/** A tool in a list (GET /tools). */
export type ToolSummary = Schemas['ToolSummary']

export type StageName = NonNullable<Schemas['WorkflowResponse']['error_stage']>

/** POST /workflow: the single-shot pipeline's request. */
export type PipelineRequest = Schemas['WorkflowRequest']

/** The pipeline's answer: the tool it chose, the request it built, the API's answer. */
export type PipelineResponse = Schemas['WorkflowResponse']

/** A workflow param's spec, or a waiting yield's field (with the options it offers). */
export type ParamSpec = Schemas['ParamView']

/** One option a yield offers: the answer, what people read, and the element it came from. */
export type ChoiceOption = Schemas['ChoiceOption']

/** A workflow in a list (each param's spec a {@link ParamSpec}). */
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
