// Shows a backend error with what failed and where: the request, status, code, message,
// each violation (field path, line), and the correlation id to quote; for a 401/403 what to do
// (sign in; which scope the action needs).
import { accessHint, type ApiError, type Violation } from '../api/client'

export function violationText(v: Violation): string {
  const at = [v.path, v.line ? `line ${v.line}` : null].filter(Boolean).join(', ')
  return at ? `${at}: ${v.message}` : v.message
}

export function ErrorBox({ error, title }: { error: ApiError | null; title?: string }) {
  if (!error) return null
  const hint = accessHint(error)
  return (
    <div className="error-box" role="alert" data-testid="error-box">
      <div className="error-title">
        {title ?? 'Request failed'}: {error.message}
      </div>
      <div className="error-where">
        {error.where}
        {error.status ? ` → ${error.status}` : ''} {error.code ? `(${error.code})` : ''}
        {error.correlationId ? ` · correlation id ${error.correlationId}` : ''}
      </div>
      {hint && <div className="access-hint" data-testid="access-hint">{hint}</div>}
      {error.violations.length > 0 && (
        <ul className="violations">
          {error.violations.map((v, i) => (
            <li key={i}>{violationText(v)}</li>
          ))}
        </ul>
      )}
    </div>
  )
}
