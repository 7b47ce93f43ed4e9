// The one way the UI talks to the backend: JSON over fetch, the signed-in API key as a Bearer
// header, and every failure turned into an ApiError that says what went wrong and where. A 401
// is also told to the session (lib/session.tsx), which then asks to sign in again.

import type { components, paths } from './schema'

const KEY_STORAGE = 'dt.apiKey'
// Earlier versions kept the API token in localStorage; a credential does not outlive the tab now.
const LEGACY_TOKEN_KEY = 'dt.apiToken'

/** The signed-in credential (an API key, or API_TOKEN): this tab's sessionStorage, else ''. */
export function getApiKey(): string {
  try {
    return sessionStorage.getItem(KEY_STORAGE) ?? ''
  } catch {
    return ''
  }
}

/** Keep `key` for this tab ('' forgets it); a token left in localStorage by an older UI goes. */
export function setApiKey(key: string): void {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key)
    else sessionStorage.removeItem(KEY_STORAGE)
    localStorage.removeItem(LEGACY_TOKEN_KEY)
  } catch {
    /* storage disabled: the key lives as long as this call */
  }
}

export function authHeaders(): Record<string, string> {
  const key = getApiKey()
  return key ? { Authorization: `Bearer ${key}` } : {}
}

type AuthListener = (error: ApiError) => void
const authListeners = new Set<AuthListener>()

/** Call `listener` on every 401 (no credential, or one the server refused); returns an unsubscribe. */
export function onUnauthorized(listener: AuthListener): () => void {
  authListeners.add(listener)
  return () => {
    authListeners.delete(listener)
  }
}

export function reportUnauthorized(error: ApiError): void {
  for (const listener of [...authListeners]) listener(error)
}

/** One thing wrong with the input: where and why (an error body's, or a check's). */
export type Violation = components['schemas']['Violation']

/** A failed request: HTTP status, the backend's error_code and message, where it happened. */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly where: string
  readonly violations: Violation[]
  readonly correlationId: string | null
  readonly body: unknown
  /** For a 403: the scope the request needs (the server's `context.scope`). */
  readonly scope: string | null

  constructor(opts: {
    status: number
    code: string
    message: string
    where: string
    violations?: Violation[]
    correlationId?: string | null
    body?: unknown
    scope?: string | null
  }) {
    super(opts.message)
    this.name = 'ApiError'
    this.status = opts.status
    this.code = opts.code
    this.where = opts.where
    this.violations = opts.violations ?? []
    this.correlationId = opts.correlationId ?? null
    this.body = opts.body
    this.scope = opts.scope ?? null
  }
}

/** What to do about a 401 or 403, in words; null for any other error. */
export function accessHint(error: ApiError): string | null {
  if (error.status === 401) return 'Not signed in, or the key was refused: sign in with an API key.'
  if (error.status === 403)
    return error.scope
      ? `Not allowed: this needs the '${error.scope}' scope. Sign in with a key that has it, or ask an admin for one.`
      : 'Not allowed: the signed-in key may not do this.'
  return null
}

/** An ApiError from a failed response's status and its (parsed) error body. */
export function errorFromResponse(status: number, data: unknown, where: string, requestId: string | null): ApiError {
  const err = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>
  const context = (err.context && typeof err.context === 'object' ? err.context : {}) as Record<string, unknown>
  const error = new ApiError({
    status,
    code: String(err.error_code ?? 'http_error'),
    message: String(err.message ?? (typeof data === 'string' && data ? data : describeStatus(status))),
    where,
    violations: Array.isArray(err.violations) ? (err.violations as Violation[]) : [],
    correlationId: (err.correlation_id as string | undefined) ?? requestId,
    body: data,
    scope: typeof context.scope === 'string' ? context.scope : null,
  })
  if (status === 401) reportUnauthorized(error)
  return error
}

function describeStatus(status: number): string {
  if (status === 401) return 'a credential is required: sign in with an API key'
  if (status === 403) return 'the signed-in key may not do this'
  if (status === 0) return 'the server could not be reached'
  return `HTTP ${status}`
}

/** One request: JSON body in, parsed JSON (or text) out; a failure throws an ApiError. */
async function request(method: string, path: string, body?: unknown): Promise<unknown> {
  const where = `${method} ${path}`
  const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders() }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  } catch (exc) {
    throw new ApiError({
      status: 0,
      code: 'network_error',
      message: `the server could not be reached (${String(exc)})`,
      where,
    })
  }
  const text = await response.text()
  let data: unknown = null
  if (text) {
    try {
      data = JSON.parse(text)
    } catch {
      data = text
    }
  }
  if (!response.ok) throw errorFromResponse(response.status, data, where, response.headers.get('x-request-id'))
  return data
}

// Requests typed by path, from the server's OpenAPI document (schema.d.ts, `make api-types`):
// the path's parameters, the request body and the answer are the operation's.

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'

/** The paths that have an operation for `M`. */
export type PathsFor<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never
}[keyof paths]

/** The operation of `M` on `P`. */
export type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>

type SuccessStatus = 200 | 201 | 202 | 204
type JsonContent<R> = R extends { content: { 'application/json': infer T } } ? T : null

/** What a successful answer of the operation holds (null for a 204). */
export type Answer<O> = O extends { responses: infer R }
  ? { [S in keyof R & SuccessStatus]: JsonContent<R[S]> }[keyof R & SuccessStatus]
  : never

/** The JSON body the operation takes. */
export type RequestBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never

type Parameters<O> = O extends { parameters: infer X } ? X : never
type PathPart<O> = Parameters<O> extends { path: infer X } ? { path: X } : { path?: never }
type QueryPart<O> = Parameters<O> extends { query: infer Q }
  ? { query: Q }
  : Parameters<O> extends { query?: infer Q }
    ? [NonNullable<Q>] extends [never]
      ? { query?: never }
      : { query?: NonNullable<Q> }
    : { query?: never }
type BodyPart<O> = O extends { requestBody?: never }
  ? { body?: never }
  : O extends { requestBody: { content: { 'application/json': infer B } } }
    ? { body: B }
    : O extends { requestBody?: { content: { 'application/json': infer B } } }
      ? { body?: B }
      : { body?: never }

/** What a request on the operation gives: its path and query parameters, its body. */
type ParamsPart<O> = PathPart<O> & QueryPart<O>
export type RequestInit<O> = (object extends ParamsPart<O> ? { params?: ParamsPart<O> } : { params: ParamsPart<O> }) &
  BodyPart<O>

type Init<O> = object extends RequestInit<O> ? [init?: RequestInit<O>] : [init: RequestInit<O>]

/** `path` with its `{name}` parameters filled in (encoded) and the query appended. */
export function fillPath(path: string, params?: { path?: object; query?: object }): string {
  const values = (params?.path ?? {}) as Record<string, unknown>
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`${path}: no value for {${name}}`)
    return encodeURIComponent(String(values[name]))
  })
  return filled + query((params?.query ?? {}) as Record<string, unknown>)
}

async function call<M extends Method, P extends PathsFor<M>>(
  method: M,
  path: P,
  given: unknown,
): Promise<Answer<Operation<P, M>>> {
  const init = given as { params?: { path?: object; query?: object }; body?: unknown } | undefined
  const data = await request(method.toUpperCase(), fillPath(path, init?.params), init?.body)
  return data as Answer<Operation<P, M>>
}

/** GET /workflows/{workflow_id} in its document form (the default; `format=arazzo` exports it instead). */
export async function getWorkflow(workflowId: string): Promise<components['schemas']['WorkflowDetail']> {
  const answer = await http.get('/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } })
  if (!('content' in answer)) throw new ApiError({ status: 200, code: 'unexpected_answer', message: 'not a workflow document', where: `GET /workflows/${workflowId}` })
  return answer
}

/** The API by path: `http.get('/runs/{run_id}', { params: { path: { run_id } } })` answers a RunState. */
export const http = {
  get: <P extends PathsFor<'get'>>(path: P, ...init: Init<Operation<P, 'get'>>) => call('get', path, init[0]),
  post: <P extends PathsFor<'post'>>(path: P, ...init: Init<Operation<P, 'post'>>) => call('post', path, init[0]),
  put: <P extends PathsFor<'put'>>(path: P, ...init: Init<Operation<P, 'put'>>) => call('put', path, init[0]),
  patch: <P extends PathsFor<'patch'>>(path: P, ...init: Init<Operation<P, 'patch'>>) =>
    call('patch', path, init[0]),
  delete: <P extends PathsFor<'delete'>>(path: P, ...init: Init<Operation<P, 'delete'>>) =>
    call('delete', path, init[0]),
}

export function toApiError(exc: unknown, where: string): ApiError {
  if (exc instanceof ApiError) return exc
  return new ApiError({ status: 0, code: 'client_error', message: String(exc), where })
}

export function query(params: Record<string, unknown>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
  return parts.length ? `?${parts.join('&')}` : ''
}
