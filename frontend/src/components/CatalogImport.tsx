// Import an OpenAPI document, a GraphQL schema or an Arazzo document as a catalog: preview
// first (what would be registered, warnings, conflicts), choose the operations (OpenAPI), then
// import (POST /catalogs). An Arazzo document brings its workflows too: they are listed in the
// preview (each one that converts can be left out; one that does not says why) and linked once
// imported. The document is a path or URL the server reads, a file uploaded with the files it
// refers to (an Arazzo document's OpenAPI sources), or pasted text. A disabled Import always
// says why and how to proceed.
import { useId, useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import type { components } from '../api/schema'
import { useCan } from '../lib/session'
import { ScopedButton } from './Access'
import { ErrorBox, violationText } from './ErrorBox'

/** What an import would register (POST /catalogs/preview). */
type Preview = components['schemas']['ImportPreview']
/** A name the import would clash with, what with and how to proceed. */
type Conflict = components['schemas']['Conflict']
/** Where the document comes from. */
type Mode = 'source' | 'upload' | 'paste'

/** A file the document refers to, with its path relative to the document. */
interface Related {
  path: string
  file: File
}

/** A file of a folder, by its path inside the folder (the folder's own name left off). */
function inFolder(file: File): string {
  const path = file.webkitRelativePath || file.name
  return path.includes('/') ? path.slice(path.indexOf('/') + 1) : path
}

/** Why Import cannot be clicked now and how to proceed, or null when it can. */
export function importBlocked(args: {
  preview: Preview
  stale: boolean
  lenient: boolean
  overwrite: boolean
  operations: number
  workflows: number
}): string | null {
  const { preview, stale, lenient, overwrite, operations, workflows } = args
  const arazzo = preview.catalog.kind === 'arazzo'
  if (stale) return 'The form changed since this preview: preview again.'
  if (!preview.valid) {
    const problems = preview.violations.length
    const shortcuts = preview.lenient_accepts ?? 0
    if (arazzo && !lenient && shortcuts > 0 && shortcuts === problems)
      return `The document uses ${shortcuts} shortcut(s) strict Arazzo refuses (listed above): tick “lenient (Arazzo)” and preview again.`
    if (arazzo && !lenient && shortcuts > 0)
      return `The document has ${problems} problem(s) (listed above): fix them — ${shortcuts} of them are shortcuts “lenient (Arazzo)” accepts — and preview again.`
    if (problems > 0) return `The document has ${problems} problem(s) (listed above): fix them and preview again.`
    return 'Nothing in this document can be imported (see the warnings above).'
  }
  if (!arazzo && operations === 0) return 'Choose at least one operation.'
  if (arazzo && workflows === 0) return 'Choose at least one workflow.'
  const blocking = preview.conflicts.filter((c) => !(c.overwrite_resolves && overwrite))
  if (blocking.length > 0) {
    const exists = blocking.filter((c) => c.overwrite_resolves)
    const others = blocking.length - exists.length
    if (others === 0)
      return `Catalog ${preview.catalog.name} exists: tick “replace an existing catalog of this name”, or choose another name and preview again.`
    return `${blocking.length} name(s) clash (listed above): ${exists.length ? 'tick “replace an existing catalog of this name” and ' : ''}choose another tool prefix or catalog name and preview again, or change the other definitions.`
  }
  return null
}

/** One conflict as a line: the name, what it clashes with, how to proceed. */
function ConflictLine({ c }: { c: Conflict }) {
  return (
    <li data-conflict={c.name}>
      <code>{c.name}</code> ({c.kind}) — clashes with {c.existing}: <span className="muted">{c.how}</span>
    </li>
  )
}

export function CatalogImport({ onImported }: { onImported: () => void }) {
  const [mode, setMode] = useState<Mode>('source')
  const [source, setSource] = useState('')
  const [documentFile, setDocumentFile] = useState<File | null>(null)
  const [related, setRelated] = useState<Related[]>([])
  const [pasted, setPasted] = useState('')
  const [previewedAs, setPreviewedAs] = useState('')
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
  const mayAuthor = useCan('author')
  const reasonId = useId()
  const options = () => ({ name: name.trim(), prefix: prefix.trim() || null, base_url: baseUrl.trim() || null, lenient })
  /** The document: the source, or its text (and the files it refers to). */
  const documentBody = async () => {
    if (mode === 'paste') return { content: pasted }
    if (mode === 'upload') {
      if (!documentFile) throw new Error('Choose the document file to upload.')
      const files: Record<string, string> = {}
      // A folder chosen for the sources may hold the document itself: it is sent once.
      for (const r of related) if (r.path !== documentFile.name) files[r.path] = await r.file.text()
      return { content: await documentFile.text(), filename: documentFile.name, files }
    }
    return { source: source.trim() }
  }
  /** What the preview was made of: when it changes, the preview is out of date. */
  const fingerprint = JSON.stringify({
    mode,
    source: mode === 'source' ? source.trim() : null,
    upload: mode === 'upload' ? [documentFile?.name, documentFile?.size, documentFile?.lastModified, ...related.map((r) => `${r.path}:${r.file.size}`)] : null,
    pasted: mode === 'paste' ? pasted : null,
    ...options(),
  })
  const arazzo = preview?.catalog.kind === 'arazzo'

  const doPreview = async () => {
    setBusy(true)
    setError(null)
    setMessage(null)
    setPreview(null)
    setImported([])
    try {
      const p = await http.post('/catalogs/preview', { body: { ...(await documentBody()), ...options(), max_preview_tokens: 200000 } })
      setPreviewedAs(fingerprint)
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
      const r = await http.post('/catalogs', { body: { ...(await documentBody()), ...options(), include, workflows, overwrite, enabled: true } })
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
  const blocked = preview
    ? importBlocked({ preview, stale: previewedAs !== fingerprint, lenient, overwrite, operations: chosen.size, workflows: flows.size })
    : null
  const addRelated = (list: FileList | null, folder: boolean) => {
    const added = Array.from(list ?? []).map((file) => ({ path: folder ? inFolder(file) : file.name, file }))
    setRelated((now) => [...now.filter((r) => !added.some((a) => a.path === r.path)), ...added])
  }
  const canPreview = mode === 'source' ? source.trim() !== '' : mode === 'upload' ? documentFile !== null : pasted.trim() !== ''

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
        <fieldset className="catalog-mode">
          <legend>Read the document from</legend>
          {([['source', 'a path or URL'], ['upload', 'uploaded files'], ['paste', 'pasted text']] as const).map(([value, text]) => (
            <label key={value} className="inline">
              <input type="radio" name="catalog-mode" value={value} checked={mode === value} onChange={() => setMode(value)} /> {text}
            </label>
          ))}
        </fieldset>
        {mode === 'source' && (
          <>
            <label htmlFor="catalog-source">Source</label>
            <input id="catalog-source" className="wide" value={source} onChange={(e) => setSource(e.target.value)} placeholder="a path inside the registry directory, file://…, or https://… on an allowed host" />
          </>
        )}
        {mode === 'upload' && (
          <div className="catalog-upload" data-testid="catalog-upload">
            <label className="inline">
              Document file <input type="file" aria-label="Document file" accept=".json,.yaml,.yml,.graphql,.gql,.txt" onChange={(e) => setDocumentFile(e.target.files?.[0] ?? null)} />
            </label>
            <label className="inline">
              Files it refers to <input type="file" multiple aria-label="Files it refers to" onChange={(e) => addRelated(e.target.files, false)} />
            </label>
            <label className="inline">
              or a folder of them <input type="file" multiple aria-label="Folder of files it refers to" {...{ webkitdirectory: '' }} onChange={(e) => addRelated(e.target.files, true)} />
            </label>
            <div className="muted small">
              An Arazzo document reads its sources (<code>./openapi.yaml</code>…) from these, by their path next to it; files in a folder keep their path inside it.
            </div>
            {related.length > 0 && (
              <ul className="catalog-related" data-testid="catalog-related">
                {related.map((r) => (
                  <li key={r.path}>
                    <code>{r.path}</code>{' '}
                    <button type="button" className="small" aria-label={`remove ${r.path}`} onClick={() => setRelated((now) => now.filter((x) => x.path !== r.path))}>remove</button>
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {mode === 'paste' && (
          <>
            <label htmlFor="catalog-paste">Document text</label>
            <textarea id="catalog-paste" className="wide catalog-paste" rows={8} value={pasted} onChange={(e) => setPasted(e.target.value)} placeholder="an OpenAPI, GraphQL or Arazzo document (JSON or YAML)" />
          </>
        )}
        <div className="row">
          <label className="inline">name <input aria-label="Catalog name" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. petstore" /></label>
          <label className="inline">tool prefix <input aria-label="Tool prefix" value={prefix} onChange={(e) => setPrefix(e.target.value)} placeholder="optional" /></label>
          <label className="inline">base URL <input aria-label="Base URL" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder="optional: instead of the document's servers" /></label>
          <label className="inline" title="Arazzo documents: also read the shortcuts some runners accept, each reported as a warning">
            <input type="checkbox" aria-label="Lenient Arazzo" checked={lenient} onChange={(e) => setLenient(e.target.checked)} /> lenient (Arazzo)
          </label>
          <button type="submit" className="primary" disabled={busy || !canPreview} title={canPreview ? undefined : 'give the document first'}>Preview</button>
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
            <div className="catalog-conflicts" data-testid="catalog-conflicts">
              <strong className="field-error">{preview.conflicts.length} name(s) clash:</strong>
              <ul className="violations">{preview.conflicts.map((c) => <ConflictLine key={`${c.kind}:${c.name}`} c={c} />)}</ul>
            </div>
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
          <div className="catalog-ops-scroll" tabIndex={0} role="region" aria-label="operations that would become tools">
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
          </div>
          {preview.command_preview_truncated && <div className="muted small">the list is truncated</div>}
          <div className="row">
            <ScopedButton scope="author" showReason type="button" className="primary" disabled={busy || blocked !== null} aria-describedby={blocked && mayAuthor.allowed ? reasonId : undefined} onClick={() => void doImport()}>
              {!arazzo
                ? `Import ${chosen.size} operation(s)`
                : flows.size < (preview.workflows ?? []).length
                  ? `Import ${flows.size} workflow(s) and the tools they call`
                  : `Import ${preview.projected_command_count} tool(s) and ${flows.size} workflow(s)`}
            </ScopedButton>
            <label className="inline"><input type="checkbox" checked={overwrite} onChange={(e) => setOverwrite(e.target.checked)} /> replace an existing catalog of this name</label>
          </div>
          {blocked && mayAuthor.allowed && (
            <div id={reasonId} className="import-reason small" data-testid="import-reason">{blocked}</div>
          )}
        </div>
      )}
    </div>
  )
}
