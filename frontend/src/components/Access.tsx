// Access in the UI: buttons the signed-in principal's scopes do not allow (disabled, with the
// reason as a tooltip and as text screen readers announce), a visible note saying what a page
// cannot do, the sign-in form and who is signed in.
import { useId, useState, type ButtonHTMLAttributes } from 'react'
import type { ApiError } from '../api/client'
import { type Permission, type Scope, useCan, useSession } from '../lib/session'

interface ScopedButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  /** The scope the action needs (access/policy.py on the server). */
  scope: Scope
  /** Whose data it acts on (a run's owner): only they or an admin may. */
  owner?: string | null
  /** Show the reason next to the button too (for the main action of a form). */
  showReason?: boolean
}

/**
 * A button for an action that needs `scope`. Refused, it stays focusable but inert
 * (`aria-disabled`, so keyboard and screen reader users reach it and hear why), with the reason
 * as its tooltip and description; a click or a form's implicit submission does nothing.
 */
export function ScopedButton({ scope, owner, showReason, onClick, title, className, children, ...rest }: ScopedButtonProps) {
  const permit = useCan(scope, owner)
  const reasonId = useId()
  if (permit.allowed) {
    return (
      <button {...rest} title={title} className={className} onClick={onClick}>
        {children}
      </button>
    )
  }
  return (
    <>
      <button
        {...rest}
        className={`${className ?? ''} blocked`.trim()}
        aria-disabled="true"
        title={`${title ? `${title}: ` : ''}${permit.reason}`}
        aria-describedby={reasonId}
        data-blocked-reason={permit.reason ?? undefined}
        onClick={(e) => e.preventDefault()}
      >
        {children}
      </button>
      <span id={reasonId} className={showReason ? 'blocked-reason small' : 'sr-only'}>
        {permit.reason}
      </span>
    </>
  )
}

/** A visible line saying what cannot be done here and why; nothing when it can. */
export function BlockedNote({ permit, what, testId }: { permit: Permission; what: string; testId?: string }) {
  if (permit.allowed) return null
  return (
    <div className="blocked-note small" data-testid={testId ?? 'blocked-note'}>
      {what}: {permit.reason}
    </div>
  )
}

/** The sign-in page: an API key (or API_TOKEN), kept in this tab's sessionStorage. */
export function SignIn() {
  const session = useSession()
  const [key, setKey] = useState('')
  const [error, setError] = useState<ApiError | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const shown = error ?? session.ended
  return (
    <div className="page sign-in-page">
      <form
        className="card sign-in"
        aria-labelledby="sign-in-title"
        data-testid="sign-in"
        onSubmit={(e) => {
          e.preventDefault()
          const trimmed = key.trim()
          if (!trimmed) {
            setProblem('Enter an API key.')
            return
          }
          setProblem(null)
          setBusy(true)
          void session.signIn(trimmed).then((refused) => {
            setBusy(false)
            setError(refused)
            if (!refused) setKey('')
          })
        }}
      >
        <h1 id="sign-in-title">Sign in</h1>
        <p className="muted">
          This server needs a credential. Paste an API key (<code>dtk_…</code>, from your admin) or the server&apos;s{' '}
          <code>API_TOKEN</code>. It is kept in this browser tab only and sent as <code>Authorization: Bearer</code>.
        </p>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          className="wide"
          autoComplete="off"
          autoCapitalize="off"
          spellCheck={false}
          autoFocus
          aria-invalid={Boolean(problem || error)}
          aria-describedby={problem || shown ? 'sign-in-error' : undefined}
          value={key}
          onChange={(e) => {
            setKey(e.target.value)
            setProblem(null)
          }}
        />
        {(problem || shown) && (
          <div id="sign-in-error" className="error-box" role="alert" data-testid="sign-in-error">
            <div className="error-title">{problem ?? (error ? 'Not signed in' : 'Signed out')}</div>
            {!problem && shown && (
              <div>
                {shown.message}
                {shown.status === 403 && shown.scope === 'read' ? ' — the UI needs a key with the read scope.' : ''}
              </div>
            )}
          </div>
        )}
        <div className="row">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </div>
      </form>
    </div>
  )
}

/** Who is signed in (name and scopes) and a sign-out; nothing without access control. */
export function WhoAmI() {
  const session = useSession()
  if (session.phase !== 'signed-in' || !session.me) return null
  const me = session.me
  return (
    <div className="who" data-testid="who">
      <span title={`${me.id} (${me.kind})`}>
        {me.name} <span className="who-scopes">· {me.scopes.join(', ') || 'no scope'}</span>
      </span>
      <button type="button" className="link" onClick={session.signOut}>Sign out</button>
    </div>
  )
}
