// Whether a secret a tool needs is set (never its value), and where to set it when it is not.
import type { components } from '../api/schema'

type SecretState = components['schemas']['SecretStatus']

export function SecretStatus({ state }: { state: SecretState }) {
  return state.set ? (
    <span className="secret-ok" data-testid="secret-set">
      <code>{state.secret}</code> set ✓
    </span>
  ) : (
    <span className="secret-missing" role="status" data-testid="secret-missing">
      ⚠ <code>{state.secret}</code> is not set: calls will fail until you set {state.set_with}
    </span>
  )
}
