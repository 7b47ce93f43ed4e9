// The one way the UI talks to the backend: JSON over fetch, the API token as a Bearer header,
// and every failure turned into an ApiError that says what went wrong and where.

const TOKEN_KEY = 'dt.apiToken'

export function getToken(): string {
  try {
    return localStorage.getItem(TOKEN_KEY) ?? ''
  } catch {
    return ''
  }
}

export function setToken(token: string): void {
  if (token) localStorage.setItem(TOKEN_KEY, token)
  else localStorage.removeItem(TOKEN_KEY)
}

export function authHeaders(): Record<string, string> {
  const token = getToken()
  return token ? { Authorization: `Bearer ${token}` } : {}
}

export interface Violation {
  path?: string
  rule?: string | null
  message: string
  line?: number | null
  column?: number | null
  expected?: unknown
  actual?: unknown
  severity?: string
  file?: string
}

/** A failed request: HTTP status, the backend's error_code and message, where it happened. */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly where: string
  readonly violations: Violation[]
  readonly correlationId: string | null
  readonly body: unknown

  constructor(opts: {
    status: number
    code: string
    message: string
    where: string
    violations?: Violation[]
    correlationId?: string | null
    body?: unknown
  }) {
    super(opts.message)
    this.name = 'ApiError'
    this.status = opts.status
    this.code = opts.code
    this.where = opts.where
    this.violations = opts.violations ?? []
    this.correlationId = opts.correlationId ?? null
    this.body = opts.body
  }
}

function describeStatus(status: number): string {
  if (status === 401) return 'the API token is missing or wrong (set it at the top right)'
  if (status === 0) return 'the server could not be reached'
  return `HTTP ${status}`
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
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
  if (!response.ok) {
    const err = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>
    throw new ApiError({
      status: response.status,
      code: String(err.error_code ?? 'http_error'),
      message: String(err.message ?? (typeof data === 'string' && data ? data : describeStatus(response.status))),
      where,
      violations: Array.isArray(err.violations) ? (err.violations as Violation[]) : [],
      correlationId: (err.correlation_id as string | undefined) ?? response.headers.get('x-request-id'),
      body: data,
    })
  }
  return data as T
}

export function toApiError(exc: unknown, where: string): ApiError {
  if (exc instanceof ApiError) return exc
  return new ApiError({ status: 0, code: 'client_error', message: String(exc), where })
}

export function query(params: Record<string, string | number | undefined | null>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
  return parts.length ? `?${parts.join('&')}` : ''
}
