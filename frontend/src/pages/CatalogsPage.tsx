// Imported OpenAPI catalogs: list, enable/disable, remove; and the import with a preview.
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import { BlockedNote, ScopedButton } from '../components/Access'
import { CatalogImport } from '../components/CatalogImport'
import { ErrorBox } from '../components/ErrorBox'
import { SecretStatus } from '../components/SecretStatus'
import { formatTime } from '../lib/format'
import { useApi } from '../lib/useApi'
import { useCan } from '../lib/session'

export function CatalogsPage() {
  const list = useApi(
    () => http.get('/catalogs'),
    [],
    'GET /catalogs',
  )
  const [error, setError] = useState<ApiError | null>(null)
  const mayAuthor = useCan('author')
  const mayRemove = useCan('admin')
  const act = async (where: string, request: () => Promise<unknown>) => {
    setError(null)
    try {
      await request()
      list.reload()
    } catch (exc) {
      setError(toApiError(exc, where))
    }
  }
  return (
    <div className="page">
      <div className="row spread">
        <h1>Catalogs</h1>
        <button type="button" onClick={list.reload}>Refresh</button>
      </div>
      <p className="lead">An OpenAPI document imported as a catalog registers one tool per chosen operation; an Arazzo document also saves its workflows, each served as a <code>w_*</code> tool.</p>
      <BlockedNote permit={mayAuthor} what="Importing, enabling and disabling catalogs" />
      {mayAuthor.allowed && <BlockedNote permit={mayRemove} what="Removing catalogs" />}
      <CatalogImport onImported={list.reload} />
      <ErrorBox error={list.error} title="Could not list the catalogs" />
      <ErrorBox error={error} />
      {list.data && (
        <table className="list-table" data-testid="catalog-list">
          <thead>
            <tr><th>catalog</th><th>source</th><th>tools</th><th>secrets</th><th>updated</th><th>enabled</th><th><span className="sr-only">actions</span></th></tr>
          </thead>
          <tbody>
            {list.data.catalogs.map((c) => (
              <tr key={c.name} data-catalog={c.name}>
                <td data-label="catalog"><strong>{c.name}</strong> <span className="muted">{c.title ?? ''}</span></td>
                <td data-label="source" className="muted small">{c.source}</td>
                <td data-label="tools">{c.registered_tools} registered of {c.tool_count}{c.prefix ? ` (prefix ${c.prefix})` : ''}</td>
                <td data-label="secrets" data-testid="catalog-secrets">
                  {(c.secrets ?? []).length === 0 ? <span className="muted">none</span> : (c.secrets ?? []).map((st) => <div key={st.secret}><SecretStatus state={st} /></div>)}
                </td>
                <td data-label="updated" className="muted">{formatTime(c.updated_at)}</td>
                <td data-label="enabled">
                  <label className="inline">
                    <input type="checkbox" aria-label={`enable ${c.name}`} checked={c.enabled} disabled={!mayAuthor.allowed} title={mayAuthor.reason ?? undefined} onChange={(e) => void act(`PATCH /catalogs/${c.name}/enabled`, () => http.patch('/catalogs/{name}/enabled', { params: { path: { name: c.name } }, body: { enabled: e.target.checked } }))} />
                    {c.enabled ? 'on' : 'off'}
                  </label>
                </td>
                <td data-label="actions">
                  <ScopedButton scope="admin" type="button" className="danger" onClick={() => window.confirm(`Remove catalog ${c.name} and its tools?`) && void act(`DELETE /catalogs/${c.name}`, () => http.delete('/catalogs/{name}', { params: { path: { name: c.name } } }))}>
                    Remove
                  </ScopedButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && list.data.catalogs.length === 0 && <p className="muted">No catalogs imported yet.</p>}
    </div>
  )
}
