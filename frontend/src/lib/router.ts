// Hash routing (#/runs/abc?x=1): the static bundle is served from one index.html. One listener
// follows the hash for every `useRoute`; a page with unsaved work can hold a leaving navigation
// (a link click or a changed hash) until the user answers — see `useLeaveGuard`.
import { useCallback, useEffect, useState, useSyncExternalStore } from 'react'

export interface Route {
  path: string[]
  query: URLSearchParams
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/'
  const [pathPart, queryPart = ''] = raw.split('?', 2)
  return {
    path: pathPart.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(queryPart),
  }
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`
}

/** Whether two hashes name the same page (the query may differ). */
export function samePage(a: string, b: string): boolean {
  return parseHash(a).path.join('/') === parseHash(b).path.join('/')
}

/** Who holds navigation away from the current page, and how to ask the user. */
interface LeaveGuard {
  ask: (to: string) => void
}

let guard: LeaveGuard | null = null
let unguardedTo: string | null = null
let shownHash = typeof window === 'undefined' ? '' : window.location.hash
let shownRoute = parseHash(shownHash)
const listeners = new Set<() => void>()

function normal(to: string): string {
  return to.startsWith('#') ? to : `#${to}`
}

/** Whether going to `to` leaves the page the guard holds (and so must be asked). */
function held(to: string): boolean {
  return guard !== null && !samePage(to, shownHash)
}

function followHash(): void {
  const next = window.location.hash
  if (next === shownHash) return
  if (held(next) && unguardedTo !== normal(next)) {
    // Typed into the address bar or a Back: put the page's own address back, then ask.
    history.replaceState(history.state, '', `${window.location.pathname}${window.location.search}${shownHash || '#/'}`)
    guard?.ask(next)
    return
  }
  unguardedTo = null
  shownHash = next
  shownRoute = parseHash(next)
  listeners.forEach((l) => l())
}

function interceptLink(event: MouseEvent): void {
  if (guard === null || event.defaultPrevented || event.button !== 0) return
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const link = (event.target as Element | null)?.closest?.('a[href^="#"]')
  if (!link || (link.getAttribute('target') ?? '_self') !== '_self') return
  const to = link.getAttribute('href') as string
  if (!held(to)) return
  event.preventDefault()
  guard.ask(to)
}

if (typeof window !== 'undefined') {
  window.addEventListener('hashchange', followHash)
  document.addEventListener('click', interceptLink, true)
}

/**
 * Go to a hash route. `unguarded` passes a page's leave guard (the page itself moves on, e.g.
 * a new document just saved goes to its workflow).
 */
export function navigate(to: string, { unguarded = false, replace = false }: { unguarded?: boolean; replace?: boolean } = {}): void {
  const target = normal(to)
  if (unguarded) unguardedTo = target
  else if (held(target)) {
    guard?.ask(target)
    return
  }
  if (replace) window.location.replace(target)
  else window.location.hash = target
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** The route shown; a hash set while no guard holds the page counts even before its event. */
function currentRoute(): Route {
  if (guard === null && window.location.hash !== shownHash) {
    shownHash = window.location.hash
    shownRoute = parseHash(shownHash)
  }
  return shownRoute
}

export function useRoute(): Route {
  return useSyncExternalStore(subscribe, currentRoute)
}

export interface LeaveQuestion {
  /** Where the user asked to go while the guard held the page (null: nothing asked). */
  pending: string | null
  stay: () => void
  leave: () => void
}

/**
 * While `active`, leaving the page (a link, a changed hash, `navigate`) waits for the user:
 * `pending` names where to, `stay` keeps the page and its address, `leave` goes there.
 */
export function useLeaveGuard(active: boolean): LeaveQuestion {
  const [pending, setPending] = useState<string | null>(null)
  useEffect(() => {
    if (!active) return
    const mine: LeaveGuard = { ask: (to) => setPending(normal(to)) }
    guard = mine
    return () => {
      if (guard === mine) guard = null
    }
  }, [active])
  const stay = useCallback(() => setPending(null), [])
  const leave = useCallback(() => {
    setPending(null)
    if (pending !== null) navigate(pending, { unguarded: true })
  }, [pending])
  return { pending, stay, leave }
}

/** While `active`, closing or reloading the tab asks first (the browser's own question). */
export function useUnloadGuard(active: boolean): void {
  useEffect(() => {
    if (!active) return
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault()
      event.returnValue = '' // older browsers need it set
    }
    window.addEventListener('beforeunload', onBeforeUnload)
    return () => window.removeEventListener('beforeunload', onBeforeUnload)
  }, [active])
}
