import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { App } from '../App'
import { ApiError } from '../api/client'
import type { RunDetail } from '../api/types'
import { type Me, permission, SessionProvider } from '../lib/session'
import { RunsPage } from '../pages/RunsPage'
import { ScopedButton } from './Access'
import { ErrorBox } from './ErrorBox'
import { ParamsForm } from './ParamsForm'

const STATS = { since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z', bucket_s: 1800, total: 0, by_status: {}, by_workflow: [], buckets: [] }
import { RunActions } from './RunActions'

const READER: Me = { id: 'key:aaaa', name: 'ci-reader', kind: 'key', scopes: ['read'], access_control: true }
const RUNNER: Me = { id: 'key:bbbb', name: 'ci-runner', kind: 'key', scopes: ['read', 'run'], access_control: true }
const ADMIN: Me = { id: 'admin', name: 'API_TOKEN holder', kind: 'token', scopes: ['admin', 'author', 'read', 'run'], access_control: true }

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })
}

/** fetch answering GET /me by the bearer key sent (`keys`: key → principal); others 200 {}. */
function serve(keys: Record<string, Me>, accessControl = true) {
  const calls: { path: string; auth?: string }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (path: string, init?: RequestInit) => {
      const auth = (init?.headers as Record<string, string> | undefined)?.Authorization
      calls.push({ path, auth })
      const me = accessControl ? (auth ? keys[auth.replace(/^Bearer /, '')] : undefined) : { ...ADMIN, name: 'local user', kind: 'local', access_control: false }
      if (!me && !auth) return json(401, { error_code: 'unauthorized', message: 'a credential is required' })
      if (!me) return json(401, { error_code: 'unauthorized', message: 'the API key is not valid: unknown, revoked or expired' })
      if (path === '/me') return json(200, me)
      if (path.startsWith('/workflows')) return json(200, { workflows: [], problems: [] })
      if (path.startsWith('/tools')) return json(200, { tools: [], problems: [] })
      return json(200, {})
    }),
  )
  return calls
}

beforeEach(() => {
  sessionStorage.clear()
  window.location.hash = '#/workflows'
})
afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

describe('permission', () => {
  it('names the missing scope and who is signed in', () => {
    expect(permission(READER, 'run')).toEqual({ allowed: false, reason: "needs the 'run' scope (signed in as ci-reader: read)" })
    expect(permission(RUNNER, 'run').allowed).toBe(true)
    expect(permission(ADMIN, 'admin').allowed).toBe(true)
    expect(permission(null, 'admin').allowed).toBe(true) // unknown: the server decides
  })
  it("refuses acting on another principal's run unless admin", () => {
    expect(permission(RUNNER, 'run', 'key:bbbb').allowed).toBe(true)
    expect(permission(RUNNER, 'run', 'admin').reason).toBe('belongs to admin: only its owner or an admin may act on it')
    expect(permission(ADMIN, 'run', 'key:bbbb').allowed).toBe(true)
  })
})

describe('ScopedButton and scoped forms', () => {
  it('a refused action stays focusable, says why, and does nothing', async () => {
    serve({ k: READER })
    sessionStorage.setItem('dt.apiKey', 'k')
    const onClick = vi.fn()
    render(
      <SessionProvider>
        <ScopedButton scope="run" type="button" onClick={onClick}>Cancel run</ScopedButton>
      </SessionProvider>,
    )
    const button = screen.getByRole('button', { name: 'Cancel run' })
    await waitFor(() => expect(button.getAttribute('aria-disabled')).toBe('true'))
    expect(button.hasAttribute('disabled')).toBe(false)
    expect(button.title).toBe("needs the 'run' scope (signed in as ci-reader: read)")
    const description = document.getElementById(button.getAttribute('aria-describedby') as string)
    expect(description?.textContent).toBe("needs the 'run' scope (signed in as ci-reader: read)")
    fireEvent.click(button)
    expect(onClick).not.toHaveBeenCalled()
  })

  it('a form whose submit needs a missing scope sends nothing', async () => {
    serve({ k: READER })
    sessionStorage.setItem('dt.apiKey', 'k')
    const onSubmit = vi.fn()
    render(
      <SessionProvider>
        <ParamsForm fields={[]} submitLabel="Start run" scope="run" violationPrefix="params" onSubmit={onSubmit} testId="f" />
      </SessionProvider>,
    )
    const button = screen.getByRole('button', { name: 'Start run' })
    await waitFor(() => expect(button.getAttribute('aria-disabled')).toBe('true'))
    expect(screen.getByTestId('f').textContent).toContain("needs the 'run' scope") // shown, not only a tooltip
    fireEvent.click(button)
    fireEvent.submit(screen.getByTestId('f'))
    expect(onSubmit).not.toHaveBeenCalled()
  })

  it('run actions: disabled for a reader, enabled for a runner on its own run', async () => {
    const run = { run_id: 'r1', workflow_id: 'w', status: 'running', params: {}, owner: 'key:bbbb' } as unknown as RunDetail
    serve({ r: READER, w: RUNNER })
    sessionStorage.setItem('dt.apiKey', 'r')
    const first = render(<SessionProvider><RunActions run={run} events={[]} onChanged={() => {}} /></SessionProvider>)
    await waitFor(() => expect(screen.getByTestId('run-actions-blocked').textContent).toBe("Cancel and re-run: needs the 'run' scope (signed in as ci-reader: read)"))
    for (const name of ['Cancel run', 'Re-run']) expect(screen.getByRole('button', { name }).getAttribute('aria-disabled')).toBe('true')
    expect(screen.getByRole('button', { name: 'Export JSON' }).getAttribute('aria-disabled')).toBeNull()
    first.unmount()
    sessionStorage.setItem('dt.apiKey', 'w')
    render(<SessionProvider><RunActions run={run} events={[]} onChanged={() => {}} /></SessionProvider>)
    await waitFor(() => expect(screen.queryByTestId('run-actions-blocked')).toBeNull())
    await act(async () => {})
    expect(screen.getByRole('button', { name: 'Cancel run' }).getAttribute('aria-disabled')).toBeNull()
  })
})

describe('signing in', () => {
  it('asks for a key, shows the server refusing a wrong one, then shows who is signed in and signs out', async () => {
    const calls = serve({ good: RUNNER })
    render(<App />)
    const field = await screen.findByLabelText('API key')
    expect(screen.queryByTestId('sign-in-error')).toBeNull() // not signed in yet: no error
    fireEvent.change(field, { target: { value: 'wrong' } })
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }))
    expect((await screen.findByTestId('sign-in-error')).textContent).toContain('the API key is not valid: unknown, revoked or expired')
    expect(sessionStorage.getItem('dt.apiKey')).toBeNull()

    fireEvent.change(field, { target: { value: 'good' } })
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }))
    const who = await screen.findByTestId('who')
    expect(who.textContent).toContain('ci-runner')
    expect(who.textContent).toContain('read, run')
    expect(sessionStorage.getItem('dt.apiKey')).toBe('good')
    expect(await screen.findByRole('heading', { name: 'Workflows' })).toBeTruthy()
    expect(calls.filter((c) => c.path === '/workflows').every((c) => c.auth === 'Bearer good')).toBe(true)

    fireEvent.click(screen.getByRole('button', { name: 'Sign out' }))
    expect(await screen.findByLabelText('API key')).toBeTruthy()
    expect(sessionStorage.getItem('dt.apiKey')).toBeNull()
    expect(screen.queryByTestId('who')).toBeNull()
  })

  it('a stored key that is refused later signs out with the reason', async () => {
    serve({})
    sessionStorage.setItem('dt.apiKey', 'revoked')
    render(<App />)
    expect((await screen.findByTestId('sign-in-error')).textContent).toContain('the API key is not valid')
  })

  it('without access control there is no sign-in', async () => {
    serve({}, false)
    render(<App />)
    expect(await screen.findByRole('heading', { name: 'Workflows' })).toBeTruthy()
    expect(screen.queryByLabelText('API key')).toBeNull()
    expect(screen.queryByTestId('who')).toBeNull()
  })
})

describe('errors and owners', () => {
  it("a 403 in an error box names the missing scope", () => {
    const error = new ApiError({ status: 403, code: 'insufficient_scope', message: "'ci' may not cancel a run: it needs the 'run' scope", where: 'POST /runs/r1/cancel', scope: 'run' })
    render(<ErrorBox error={error} />)
    expect(screen.getByTestId('access-hint').textContent).toContain("this needs the 'run' scope")
  })

  it('an admin sees each run\'s owner and filters by owner (GET /runs?owner=)', async () => {
    const runs = [
      { run_id: 'r1aaaaaaaa', workflow_id: 'w', status: 'succeeded', created_at: '2026-01-01T00:00:00Z', started_at: null, finished_at: null, duration_ms: 5, owner: 'key:bbbb' },
      { run_id: 'r2aaaaaaaa', workflow_id: 'w', status: 'succeeded', created_at: '2026-01-01T00:00:00Z', started_at: null, finished_at: null, duration_ms: 5, owner: 'admin' },
    ]
    const paths: string[] = []
    vi.stubGlobal('fetch', vi.fn(async (path: string) => {
      paths.push(path)
      if (path === '/me') return json(200, ADMIN)
      if (path === '/keys') return json(200, { keys: [{ key_id: 'bbbb', name: 'ci-runner', principal: 'key:bbbb', state: 'active' }] })
      if (path.startsWith('/runs/stats')) return json(200, STATS)
      if (path.startsWith('/runs')) return json(200, { runs: path.includes('owner=') ? runs.slice(0, 1) : runs, total: 2, limit: 50, offset: 0 })
      return json(200, { workflows: [], problems: [] })
    }))
    render(<SessionProvider><RunsPage /></SessionProvider>)
    await waitFor(() => expect(screen.getAllByTestId('run-owner').map((c) => c.textContent)).toEqual(['key:bbbb', 'admin (you)']))
    const filter = await screen.findByLabelText('Owner filter')
    await waitFor(() => expect(within(filter).getByRole('option', { name: 'ci-runner (key:bbbb)' })).toBeTruthy())
    fireEvent.change(filter, { target: { value: 'key:bbbb' } })
    await waitFor(() => expect(screen.getAllByTestId('run-owner')).toHaveLength(1))
    expect(paths).toContain('/runs?owner=key%3Abbbb&limit=50')
    expect(window.location.hash).toBe('#/runs?owner=key%3Abbbb')
  })

  it('without owners from the server, no owner column', async () => {
    vi.stubGlobal('fetch', vi.fn(async (path: string) => json(200, path === '/me' ? { ...ADMIN, access_control: false } : path.startsWith('/runs/stats') ? STATS : path.startsWith('/runs') ? { runs: [{ run_id: 'r1aaaaaaaa', workflow_id: 'w', status: 'succeeded', created_at: '2026-01-01T00:00:00Z', started_at: null, finished_at: null, duration_ms: 5 }], total: 1, limit: 50, offset: 0 } : { workflows: [], problems: [] })))
    render(<SessionProvider><RunsPage /></SessionProvider>)
    await screen.findByTestId('run-list')
    expect(screen.queryAllByTestId('run-owner')).toHaveLength(0)
    expect(screen.queryByLabelText('Owner filter')).toBeNull() // no access control: nothing to filter
  })
})
