// Which lazily loaded page a hash route opens (as App.tsx's Page routes it), so that a deep
// link can fetch its chunk while the shell asks GET /me instead of after.
import { parseHash } from './router'

export type LazyPage = 'run' | 'editor' | 'catalogs'

/** The lazy page `hash` shows (#/runs/<id>, #/workflows/<id>, #/catalogs), or null. */
export function lazyPageFor(hash: string): LazyPage | null {
  const [section, id, part] = parseHash(hash).path
  if (section === 'runs' && id) return 'run'
  if (section === 'workflows' && id && part !== 'triggers') return 'editor'
  if (section === 'catalogs') return 'catalogs'
  return null
}
