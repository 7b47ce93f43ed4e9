// Who uses the UI: GET /me once at start, then signed in (an API key in this tab's
// sessionStorage), signed out (access control is on and there is no usable key), or open (no
// access control: a one-person setup, nothing to sign in to). Every 401 signs out, with the
// server's reason. `can(scope)` says whether an action is allowed and, when not, why.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { ApiError, http, getApiKey, onUnauthorized, setApiKey, toApiError } from '../api/client'
import type { components } from '../api/schema'

export type Scope = 'read' | 'run' | 'author' | 'admin'

/** GET /me: the principal of the requests, and whether access control is on. */
export type Me = components['schemas']['Me']

export type SessionPhase = 'checking' | 'open' | 'signed-in' | 'signed-out' | 'unknown'

export interface Permission {
  allowed: boolean
  /** Why not (the missing scope, who is signed in); null when allowed. */
  reason: string | null
}

export interface Session {
  phase: SessionPhase
  me: Me | null
  /** Why the session ended (a refused key, a revoked one): the server's 401, if any. */
  ended: ApiError | null
  /** When /me could not be read at all (the server is down): pages show their own errors. */
  problem: ApiError | null
  signIn: (key: string) => Promise<ApiError | null>
  signOut: () => void
  can: (scope: Scope, owner?: string | null) => Permission
}

const ALLOWED: Permission = { allowed: true, reason: null }

/** Whether `me` may do what needs `scope` — to data owned by `owner`, when given — and why not. */
export function permission(me: Me | null, scope: Scope, owner?: string | null): Permission {
  if (!me) return ALLOWED // not known (yet): the server decides and says why
  const admin = me.scopes.includes('admin')
  const held = me.scopes.length ? me.scopes.join(', ') : 'no scope'
  if (!admin && !me.scopes.includes(scope)) {
    return { allowed: false, reason: `needs the '${scope}' scope (signed in as ${me.name}: ${held})` }
  }
  if (owner && !admin && owner !== me.id) {
    return { allowed: false, reason: `belongs to ${owner}: only its owner or an admin may act on it` }
  }
  return ALLOWED
}

const SessionContext = createContext<Session | null>(null)

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside SessionProvider')
  return session
}

/** Whether the signed-in principal may do what needs `scope` (to `owner`'s data), and why not. */
export function useCan(scope: Scope | undefined, owner?: string | null): Permission {
  const session = useContext(SessionContext)
  if (!scope || !session) return ALLOWED
  return session.can(scope, owner)
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [phase, setPhase] = useState<SessionPhase>('checking')
  const [me, setMe] = useState<Me | null>(null)
  const [ended, setEnded] = useState<ApiError | null>(null)
  const [problem, setProblem] = useState<ApiError | null>(null)
  const signingIn = useRef(false)

  // Any 401 (a revoked or expired key, access control turned on meanwhile) ends the session.
  useEffect(
    () =>
      onUnauthorized((error) => {
        if (signingIn.current) return // the sign-in form shows its own refusal
        const refused = getApiKey() !== '' // a key was sent and refused (else: not signed in yet)
        setApiKey('')
        setMe(null)
        setEnded((before) => (refused ? error : before)) // later 401s keep the first reason
        setPhase('signed-out')
      }),
    [],
  )

  useEffect(() => {
    let live = true
    http
      .get('/me')
      .then((found) => {
        if (!live) return
        setMe(found)
        setPhase(found.access_control ? 'signed-in' : 'open')
      })
      .catch((exc: unknown) => {
        if (!live) return
        const error = toApiError(exc, 'GET /me')
        if (error.status === 401) return // the listener above signed out
        if (error.status === 403) {
          // A key without `read`: valid, but the UI can show nothing with it.
          setApiKey('')
          setEnded(error)
          setPhase('signed-out')
          return
        }
        setProblem(error)
        setPhase('unknown')
      })
    return () => {
      live = false
    }
  }, [])

  const signIn = useCallback(async (key: string): Promise<ApiError | null> => {
    signingIn.current = true
    setApiKey(key)
    try {
      const found = await http.get('/me')
      setMe(found)
      setEnded(null)
      setProblem(null)
      setPhase(found.access_control ? 'signed-in' : 'open')
      return null
    } catch (exc) {
      setApiKey('')
      return toApiError(exc, 'GET /me')
    } finally {
      signingIn.current = false
    }
  }, [])

  const signOut = useCallback(() => {
    setApiKey('')
    setMe(null)
    setEnded(null)
    setPhase('signed-out')
  }, [])

  const value = useMemo<Session>(
    () => ({ phase, me, ended, problem, signIn, signOut, can: (scope, owner) => permission(me, scope, owner) }),
    [phase, me, ended, problem, signIn, signOut],
  )
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}

/** A run owner as shown: the principal id, marked when it is the signed-in one. */
export function ownerText(owner: string, me: Me | null): string {
  return me && owner === me.id && me.access_control ? `${owner} (you)` : owner
}
