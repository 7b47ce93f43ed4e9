// Import an OpenAPI document, a GraphQL schema or an Arazzo document as a catalog: preview
// first (what would be registered, warnings, conflicts), choose the operations (OpenAPI), then
// import (POST /catalogs). An Arazzo document brings its workflows too: they are listed in the
// preview (each one that converts can be left out; one that does not says why) and linked once
// imported.
import { useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import type { components } from '../api/schema'
import { ScopedButton } from './Access'
import { ErrorBox, violationText } from './ErrorBox'

/** What an import would register (POST /catalogs/preview). */
type Preview = components['schemas']['ImportPreview']

export function CatalogImport({ onImported }: { onImported: () => void }) {
  const [source, setSource] = useState('')
  const [name, setName] = useState('')
  const [prefix, setPrefix] = useState('')
  const [baseUrl, setBaseUrl] = useState('')
  const [overwrite, setOverwrite] = useState(false)
  const [lenient, setLenient] = useState(false)
  const [imported, setImported] = useState<string[]>([])
  const [preview, setPreview] = useState<Preview | null>(null)
  const [chosen, setChosen] = useState<Set<string>>(new Set())
  const [flows, setFlows] = useState<Set<string>>(new Set())
  const [error, setError] = useState<ApiError | null>(null)
  const [message, setMessage] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const base = () => ({ source: source.trim(), name: name.trim(), prefix: prefix.trim() || null, base_url: baseUrl.trim() || null, lenient })
  const arazzo = preview?.catalog.kind === 'arazzo'

  const doPreview = async () => {
    setBusy(true)
    setError(null)
    setMessage(null)
    setPreview(null)
    setImported([])
    try {
      const p = await http.post('/catalogs/preview', { body: { ...base(), max_preview_tokens: 200000 } })
      setPreview(p)
      setChosen(new Set((p.command_preview ?? []).map((o) => o.name)))
      setFlows(new Set((p.arazzo_workflows ?? []).filter((w) => w.imported).map((w) => w.workflow_id)))
    } catch (exc) {
      setError(toApiError(exc, 'POST /catalogs/preview'))
    } finally {
      setBusy(false)
    }
  }

  const doImport = async () => {
    const all = preview?.command_preview ?? []
    const include = arazzo || chosen.size === all.length ? null : all.filter((o) => chosen.has(o.name)).map((o) => o.name)
    const convertible = (preview?.arazzo_workflows ?? []).filter((w) => w.imported)
    const workflows = arazzo && flows.size < convertible.length ? convertible.map((w) => w.workflow_id).filter((w) => flows.has(w)) : null
    setBusy(true)
    setError(null)
    try {
      const r = await http.post('/catalogs', { body: { ...base(), include, workflows, overwrite, enabled: true } })
      const unset = (r.secrets ?? []).filter((s) => !s.set)
      const needs = unset.length ? ` Its tools need ${unset.map((s) => `${s.secret} (set ${s.set_with})`).join('; ')}: calls fail until it is set.` : ''
      const flows = r.workflows?.length ? ` and ${r.workflows.length} workflow(s)` : ''
      setMessage(`Imported catalog ${r.catalog_id}: ${r.command_count} tool(s) registered${flows}.${needs}`)
      setImported(r.workflows ?? [])
      setPreview(null)
      onImported()
    } catch (exc) {
      setError(toApiError(exc, 'POST /catalogs'))
    } finally {
      setBusy(false)
    }
  }

  const flip = (name: string) => (s: Set<string>) => {
    const next = new Set(s)
    if (next.has(name)) next.delete(name)
    else next.add(name)
    return next
  }
  const toggle = (op: string) => setChosen(flip(op))

  return (
    <div className="card catalog-import" data-testid="catalog-import">
      <h2>Import an OpenAPI, GraphQL or Arazzo document</h2>
      <form
        className="import-form"
        onSubmit={(e) => {
          e.preventDefault()
          void doPreview()
        }}
      >
        <label htmlFor="catalog-source">Source</label>
        <input id="catalog-source" className="wide" value={source} onChange={(e) => setSource(e.target.value)} placeholder="a path inside the registry directory, file://…, or https://… on an allowed host" />
        <div className="row">
          <label className="inline">name <input aria-label="Catalog name" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. petstore" /></label>
          <label className="inline">tool prefix <input aria-label="Tool prefix" value={prefix} onChange={(e) => setPrefix(e.target.value)} placeholder="optional" /></label>
          <label className="inline">base URL <input aria-label="Base URL" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder="optional: instead of the document's servers" /></label>
          <label className="inline" title="Arazzo documents: also read the shortcuts some runners accept, each reported as a warning">
            <input type="checkbox" aria-label="Lenient Arazzo" checked={lenient} onChange={(e) => setLenient(e.target.checked)} /> lenient (Arazzo)
          </label>
          <button type="submit" className="primary" disabled={busy}>Preview</button>
        </div>
      </form>
      <ErrorBox error={error} />
      {message && (
        <div className="ok-text" data-testid="import-message">
          {message}
          {imported.length > 0 && (
            <ul className="imported-workflows" data-testid="imported-workflows">
              {imported.map((id) => <li key={id}><a href={`#/workflows/${id}`}>w_{id}</a></li>)}
            </ul>
          )}
        </div>
      )}
      {preview && (
        <div className="catalog-preview" data-testid="catalog-preview">
          <div>
            <strong>{preview.catalog.title ?? preview.catalog.name}</strong> · {preview.catalog.kind} {preview.catalog.openapi_version ?? ''}
            {!arazzo && <> · base URL <code>{preview.catalog.base_url ?? '—'}</code></>} · {preview.projected_command_count} operation(s) would become tools
            {preview.projected_group_prefixes.length > 0 && <> · groups: {preview.projected_group_prefixes.map((g) => `${g.group} (${g.count})`).join(', ')}</>}
          </div>
          {preview.violations.length > 0 && (
            <ul className="violations field-error">{preview.violations.map((v, i) => <li key={i}>{violationText(v)}</li>)}</ul>
          )}
          {preview.conflicts.length > 0 && (
            <ul className="violations field-error">{preview.conflicts.map((c, i) => <li key={i}>conflict: {JSON.stringify(c)}</li>)}</ul>
          )}
          {preview.warnings.length > 0 && (
            <details>
              <summary>{preview.warnings.length} warning(s)</summary>
              <ul className="violations warnings">{preview.warnings.map((w, i) => <li key={i}>{violationText(w)}</li>)}</ul>
            </details>
          )}
          {arazzo && (
            <div data-testid="arazzo-workflows">
              {(preview.workflows ?? []).length} workflow(s) would be saved and served as <code>w_*</code> tools:{' '}
              {(preview.workflows ?? []).map((w, i) => <span key={w}>{i > 0 && ', '}<code>w_{w}</code></span>)}
              <ul className="arazzo-workflow-report" data-testid="arazzo-workflow-report">
                {(preview.arazzo_workflows ?? []).map((w) => (
                  <li key={w.workflow_id}>
                    <label className="inline">
                      <input type="checkbox" aria-label={`import workflow ${w.workflow_id}`} disabled={!w.imported} checked={w.imported && flows.has(w.workflow_id)} onChange={() => setFlows(flip(w.workflow_id))} />{' '}
                      <code>{w.workflow_id}</code>{w.id && <> → <code>w_{w.id}</code></>}
                    </label>
                    {!w.imported && <span className="field-error"> left out: {w.problems.length ? violationText(w.problems[0]) : 'not chosen'}</span>}
                  </li>
                ))}
              </ul>
              {preview.workflow_document && (
                <details>
                  <summary>the workflow document</summary>
                  <pre className="code-block" data-testid="arazzo-document" tabIndex={0}>{preview.workflow_document}</pre>
                </details>
              )}
            </div>
          )}
          {!arazzo && <div className="row">
            <button type="button" onClick={() => setChosen(new Set((preview.command_preview ?? []).map((o) => o.name)))}>Select all</button>
            <button type="button" onClick={() => setChosen(new Set())}>Select none</button>
            <span className="muted">{chosen.size} of {(preview.command_preview ?? []).length} chosen</span>
          </div>}
          <table className="params-table">
            <thead>
              <tr><th><span className="sr-only">choose</span></th><th>tool</th><th>operation</th><th>summary</th><th>parameters</th></tr>
            </thead>
            <tbody>
              {(preview.command_preview ?? []).map((op) => (
                <tr key={op.name}>
                  <td>{!arazzo && <input type="checkbox" aria-label={`import ${op.name}`} checked={chosen.has(op.name)} onChange={() => toggle(op.name)} />}</td>
                  <td><code>{op.name}</code></td>
                  <td><span className="method">{op.method}</span> <code>{op.path}</code></td>
                  <td>{op.summary ?? ''}</td>
                  <td className="muted">{op.parameters.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {preview.command_preview_truncated && <div className="muted small">the list is truncated</div>}
          <div className="row">
            <ScopedButton scope="author" showReason type="button" className="primary" disabled={busy || (!arazzo && chosen.size === 0) || (arazzo && flows.size === 0) || !preview.valid} onClick={() => void doImport()}>
              {!arazzo
                ? `Import ${chosen.size} operation(s)`
                : flows.size < (preview.workflows ?? []).length
                  ? `Import ${flows.size} workflow(s) and the tools they call`
                  : `Import ${preview.projected_command_count} tool(s) and ${flows.size} workflow(s)`}
            </ScopedButton>
            <label className="inline"><input type="checkbox" checked={overwrite} onChange={(e) => setOverwrite(e.target.checked)} /> replace an existing catalog of this name</label>
          </div>
        </div>
      )}
    </div>
  )
}
