import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { accessHint, ApiError, fillPath, getApiKey, http, onUnauthorized, setApiKey } from './client'
import { followRunEvents } from './events'

const KEY = 'dtk_0123456789abcdef_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ'

function answer(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } })
}

/** fetch replaced by one answering `reply`; its calls (path and headers) are recorded. */
function stubFetch(reply: (path: string) => Response) {
  const calls: { path: string; headers: Record<string, string> }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (path: string, init?: RequestInit) => {
      calls.push({ path, headers: { ...(init?.headers as Record<string, string>) } })
      return reply(path)
    }),
  )
  return calls
}

beforeEach(() => {
  sessionStorage.clear()
  localStorage.clear()
})
afterEach(() => {
  vi.unstubAllGlobals()
})

describe('requests typed by path', () => {
  it('fill the path parameters (encoded) and the query, and send the body as JSON', async () => {
    const calls: { path: string; method?: string; body?: unknown }[] = []
    vi.stubGlobal(
      'fetch',
      vi.fn(async (path: string, init?: RequestInit) => {
        calls.push({ path, method: init?.method, body: init?.body })
        return answer(202, { run_id: 'r1', status: 'pending' })
      }),
    )
    const started = await http.post('/workflows/{workflow_id}/runs', { params: { path: { workflow_id: 'a b/c' } }, body: { params: { city: 'Oslo' } } })
    expect(started.run_id).toBe('r1')
    await http.get('/runs', { params: { query: { status: ['failed'], limit: 5, workflow_id: undefined } } })
    expect(calls).toEqual([
      { path: '/workflows/a%20b%2Fc/runs', method: 'POST', body: '{"params":{"city":"Oslo"}}' },
      { path: '/runs?status=failed&limit=5', method: 'GET', body: undefined },
    ])
  })

  it('take the parameters, body and answer of the operation (checked by `npm run typecheck`)', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => answer(200, { run_id: 'r', status: 'running' })))
    const run = await http.get('/runs/{run_id}', { params: { path: { run_id: 'r' } } })
    const status: 'pending' | 'running' | 'waiting_input' | 'succeeded' | 'failed' | 'cancelled' = run.status
    expect(status).toBe('running')
    const typeErrors = async () => {
      // @ts-expect-error a path parameter is required
      await http.get('/runs/{run_id}')
      // @ts-expect-error the body of a run is {params: {...}}
      await http.post('/workflows/{workflow_id}/runs', { params: { path: { workflow_id: 'w' } }, body: { params: 1 } })
      // @ts-expect-error no such path
      await http.get('/no/such/path')
      // @ts-expect-error GET /runs/{run_id} answers a RunState, whose run_id is a string
      const position: number = run.run_id
      return position
    }
    expect(typeof typeErrors).toBe('function')
  })

  it('refuse a path whose parameter has no value', () => {
    expect(() => fillPath('/runs/{run_id}', { path: {} })).toThrow('no value for {run_id}')
  })
})

describe('the API key', () => {
  it('is kept in sessionStorage and sent as a bearer header on every call', async () => {
    const calls = stubFetch(() => answer(200, { ok: true }))
    setApiKey(KEY)
    expect(sessionStorage.getItem('dt.apiKey')).toBe(KEY)
    expect(localStorage.length).toBe(0)
    await http.get('/runs')
    await http.post('/workflows/{workflow_id}/runs', { params: { path: { workflow_id: 'x' } }, body: { params: {} } })
    expect(calls.map((c) => c.headers.Authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`])
  })

  it('is not sent when signed out, and a token an older UI left in localStorage is dropped', async () => {
    localStorage.setItem('dt.apiToken', 'old-token')
    expect(getApiKey()).toBe('') // never read from localStorage
    const calls = stubFetch(() => answer(200, {}))
    setApiKey(KEY)
    setApiKey('')
    expect(localStorage.getItem('dt.apiToken')).toBeNull()
    await http.get('/tools')
    expect(calls[0].headers.Authorization).toBeUndefined()
  })
})

describe('401 and 403', () => {
  it('a 401 is an ApiError with the server message, told to the session', async () => {
    stubFetch(() =>
      answer(401, { error_code: 'unauthorized', message: 'the API key is not valid: unknown, revoked or expired', context: {} }, {
        'WWW-Authenticate': 'Bearer error="invalid_token"',
      }),
    )
    const heard: ApiError[] = []
    const stop = onUnauthorized((e) => heard.push(e))
    const error = await http.get('/runs').catch((e: unknown) => e)
    stop()
    expect(error).toBeInstanceOf(ApiError)
    const e = error as ApiError
    expect([e.status, e.code, e.message, e.where]).toEqual([401, 'unauthorized', 'the API key is not valid: unknown, revoked or expired', 'GET /runs'])
    expect(heard).toEqual([e])
    expect(accessHint(e)).toContain('sign in with an API key')
    // unsubscribed: later 401s are not heard
    await http.get('/runs').catch(() => null)
    expect(heard).toHaveLength(1)
  })

  it('a 403 names the missing scope from context.scope and is not a sign-out', async () => {
    stubFetch(() =>
      answer(403, { error_code: 'insufficient_scope', message: "'ci' may not start a run: it needs the 'run' scope", context: { scope: 'run' } }),
    )
    const heard: ApiError[] = []
    const stop = onUnauthorized((e) => heard.push(e))
    const e = (await http.post('/workflows/{workflow_id}/runs', { params: { path: { workflow_id: 'w' } }, body: { params: {} } }).catch((x: unknown) => x)) as ApiError
    stop()
    expect(e.status).toBe(403)
    expect(e.scope).toBe('run')
    expect(accessHint(e)).toBe("Not allowed: this needs the 'run' scope. Sign in with a key that has it, or ask an admin for one.")
    expect(heard).toHaveLength(0)
  })

  it('other errors have no access hint', () => {
    expect(accessHint(new ApiError({ status: 422, code: 'invalid_input', message: 'bad', where: 'POST /x' }))).toBeNull()
  })
})

describe('the run event stream', () => {
  it('sends the bearer header and stops on a 403, reporting the scope', async () => {
    setApiKey(KEY)
    const calls = stubFetch(() => answer(403, { error_code: 'insufficient_scope', message: 'needs read', context: { scope: 'read' } }))
    const error = await new Promise<ApiError>((resolve) => {
      followRunEvents('r1', { onEvent: () => {}, onError: resolve })
    })
    expect(calls).toHaveLength(1) // no retry: it would be refused again
    expect(calls[0].path).toBe('/runs/r1/events?after=0')
    expect(calls[0].headers.Authorization).toBe(`Bearer ${KEY}`)
    expect(calls[0].headers.Accept).toBe('text/event-stream')
    expect([error.status, error.scope, error.message]).toEqual([403, 'read', 'needs read'])
  })

  it('a 401 on the stream is told to the session', async () => {
    stubFetch(() => answer(401, { error_code: 'unauthorized', message: 'a credential is required' }))
    const heard: ApiError[] = []
    const stop = onUnauthorized((e) => heard.push(e))
    const error = await new Promise<ApiError>((resolve) => {
      followRunEvents('r1', { onEvent: () => {}, onError: resolve })
    })
    stop()
    expect(error.status).toBe(401)
    expect(heard).toEqual([error])
  })
})
