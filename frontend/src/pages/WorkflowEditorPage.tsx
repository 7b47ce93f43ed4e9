// A workflow document: its source, graph and run form; "Edit" opens the editor (highlighted
// text, live validation with errors on their lines, a graph preview before saving, save with
// the expected version, 409 -> reload offered). `_new` creates a new document. The editor's
// code (CodeMirror) is fetched only when the editor opens.
import type { EditorView } from '@codemirror/view'
import { lazy, Suspense, useEffect, useRef, useState } from 'react'
import { getWorkflow, http, type ApiError, toApiError } from '../api/client'
import type { WorkflowDetail, WorkflowSummary } from '../api/types'
import { DocumentPreview } from '../components/DocumentPreview'
import { ScopedButton } from '../components/Access'
import { ErrorBox } from '../components/ErrorBox'
import { RunStartPanel } from '../components/RunStartPanel'
import { ViolationList } from '../components/ViolationList'
import { LeaveDialog } from '../components/LeaveDialog'
import { href, navigate, useLeaveGuard, useUnloadGuard } from '../lib/router'
import { triggersSummary } from '../lib/triggers'
import { useValidation } from '../lib/useValidation'

const YamlEditor = lazy(() => import('../components/YamlEditor').then((m) => ({ default: m.YamlEditor })))

type DocFormat = WorkflowSummary['format']

const TEMPLATE = `domain: my_domain
version: "1.0"
workflows:
  my_workflow:
    description: "What this workflow does"
    params:
      city: { type: str, required: true }
    graph:
      search:
        call: search_hotels
        args: { city: $city, checkin: "2026-12-01", checkout: "2026-12-02" }
        output: hotels
`

interface Saved {
  content: string
  version: string | null
  format: DocFormat
  file: string | null
}

export function WorkflowEditorPage({ workflowId, showRun }: { workflowId: string; showRun: boolean }) {
  const isNew = workflowId === '_new'
  const [detail, setDetail] = useState<WorkflowDetail | null>(null)
  const [saved, setSaved] = useState<Saved | null>(isNew ? { content: TEMPLATE, version: null, format: 'yaml', file: null } : null)
  const [content, setContent] = useState(isNew ? TEMPLATE : '')
  const [fileName, setFileName] = useState('my_workflow.yaml')
  const [loadError, setLoadError] = useState<ApiError | null>(null)
  const [saveError, setSaveError] = useState<ApiError | null>(null)
  const [conflict, setConflict] = useState<ApiError | null>(null)
  const [message, setMessage] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [runOpen, setRunOpen] = useState(showRun)
  const [editing, setEditing] = useState(isNew)
  const view = useRef<EditorView | null>(null)
  const format: DocFormat = saved?.format ?? 'yaml'
  // Only a loaded document is checked: the empty text before it arrives is not an error.
  const validation = useValidation(saved === null ? null : content, format)
  const dirty = saved !== null && content !== saved.content
  const leaving = useLeaveGuard(dirty)
  useUnloadGuard(dirty)
  // `?run=1` opens the run form, also when it is added to the address of this open page.
  useEffect(() => {
    if (showRun) setRunOpen(true)
  }, [showRun])
  const toggleRun = () => {
    const open = !runOpen
    setRunOpen(open)
    // The address follows the form, so a link with `?run=1` opens it again.
    navigate(`${href('workflows', workflowId)}${open ? '?run=1' : ''}`, { replace: true })
  }

  const load = async () => {
    if (isNew) return
    const path = `/workflows/${encodeURIComponent(workflowId)}`
    try {
      const d = await getWorkflow(workflowId)
      setDetail(d)
      setSaved({ content: d.content, version: d.version, format: d.format, file: d.file })
      setContent(d.content)
      setLoadError(null)
      setConflict(null)
      setSaveError(null)
    } catch (exc) {
      setLoadError(toApiError(exc, `GET ${path}`))
    }
  }
  useEffect(() => {
    void load()
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [workflowId])

  const save = async (overwriteVersion?: string) => {
    const where = isNew ? 'POST /workflows' : `PUT /workflows/${workflowId}`
    setBusy(true)
    setSaveError(null)
    setMessage(null)
    try {
      const r = isNew
        ? await http.post('/workflows', { body: { content, format, file: fileName, overwrite: false } })
        : await http.put('/workflows/{workflow_id}', {
            params: { path: { workflow_id: workflowId } },
            body: { content, format, expected_version: overwriteVersion ?? saved?.version, overwrite: false },
          })
      setConflict(null)
      setSaved({ content, version: r.version, format, file: r.file })
      setMessage(`Saved ${r.file} (version ${r.version})`)
      if (isNew && r.workflows[0]) navigate(href('workflows', r.workflows[0]), { unguarded: true })
    } catch (exc) {
      const error = toApiError(exc, where)
      if (error.status === 409) setConflict(error)
      else setSaveError(error)
    } finally {
      setBusy(false)
    }
  }

  const overwrite = async () => {
    try {
      const latest = await getWorkflow(workflowId)
      await save(latest.version)
    } catch (exc) {
      setSaveError(toApiError(exc, `GET /workflows/${workflowId}`))
    }
  }

  const triggers = detail ? triggersSummary(detail.schedules, detail.webhooks) : ''
  const errors = validation.violations.filter((v) => (v.severity ?? 'error') === 'error').length
  const warnings = validation.violations.length - errors

  return (
    <div className="page editor-page">
      <LeaveDialog question={leaving} what={`The document ${isNew ? 'you are writing' : workflowId} has unsaved changes.`} />
      <div className="row spread">
        <h1>
          {isNew ? 'New workflow document' : <>Workflow <code>{workflowId}</code></>}
        </h1>
        {!isNew && (
          <div className="row">
            <button type="button" onClick={toggleRun}>{runOpen ? 'Hide run form' : 'Start a run…'}</button>
            <a className="button" href={`${href('runs')}?workflow_id=${encodeURIComponent(workflowId)}`}>Runs</a>
            <a className="button" href={href('workflows', workflowId, 'triggers')} data-testid="triggers-link">
              Schedules &amp; webhooks{triggers ? ` (${triggers})` : ''}
            </a>
          </div>
        )}
      </div>
      <ErrorBox error={loadError} title="Could not load the workflow" />
      {detail && (
        <div className="muted small">
          {detail.file} · {detail.format} · version {saved?.version} · workflows in this document: {detail.document_workflows.join(', ')}
        </div>
      )}
      {runOpen && !isNew && <RunStartPanel workflowId={workflowId} note={dirty ? 'Runs use the saved document; your unsaved edits are not part of it.' : undefined} />}
      {saved && (
        <div className="editor-layout">
          <div className="editor-column">
            <div className="row spread validation-status" data-testid="validation-status" data-valid={String(validation.valid)}>
              <span className={validation.checking ? 'muted' : ''}>
                {validation.checking
                  ? 'checking…'
                  : validation.valid === null
                    ? ''
                    : validation.valid
                      ? `✓ valid${warnings ? `, ${warnings} warning(s)` : ''}`
                      : `✗ ${errors} error(s)${warnings ? `, ${warnings} warning(s)` : ''}`}
              </span>
              <span>{dirty ? 'unsaved changes' : 'saved'}</span>
            </div>
            {editing ? (
              <Suspense fallback={<textarea className="editor-loading" aria-label="Document (the editor is loading)" value={content} onChange={(e) => setContent(e.target.value)} rows={20} />}>
                <YamlEditor value={content} onChange={setContent} violations={validation.checkedContent === content ? validation.violations : []} highlight={format !== 'xml'} onView={(v) => (view.current = v)} />
              </Suspense>
            ) : (
              <div className="source-view">
                <pre data-testid="source-view" tabIndex={0}>{content}</pre>
                <button type="button" className="primary" onClick={() => setEditing(true)}>Edit</button>
              </div>
            )}
            <ErrorBox error={validation.error} title="Validation is unavailable" />
            <ViolationList
              violations={validation.violations}
              onJump={(line) => {
                setEditing(true)
                void import('../components/YamlEditor').then((m) => m.jumpToLine(view.current, line))
              }}
            />
            <div className="row save-row">
              {isNew && <input aria-label="File name" value={fileName} onChange={(e) => setFileName(e.target.value)} />}
              <ScopedButton scope="author" showReason type="button" className="primary" disabled={busy || (!dirty && !isNew)} onClick={() => void save()}>
                {busy ? 'Saving…' : 'Save'}
              </ScopedButton>
              {dirty && !isNew && <button type="button" onClick={() => setContent(saved.content)}>Discard edits</button>}
              {message && <span className="ok-text" data-testid="save-message">{message}</span>}
            </div>
            {conflict && (
              <div className="error-box conflict" role="alert" data-testid="save-conflict">
                <div className="error-title">Not saved: the document changed since you opened it.</div>
                <div className="error-where">{conflict.where} → 409 ({conflict.code}): {conflict.message}</div>
                <div className="row">
                  <button type="button" onClick={() => void load()}>Reload (discard my edits)</button>
                  {!isNew && <ScopedButton scope="author" type="button" onClick={() => void overwrite()}>Overwrite with my version</ScopedButton>}
                </div>
              </div>
            )}
            <ErrorBox error={saveError} title="Not saved" />
          </div>
          <div className="preview-column">
            <DocumentPreview
              graphs={validation.checkedContent === null ? null : validation.graphs}
              preferred={isNew ? null : workflowId}
              fallback={detail ? { [workflowId]: detail.nodes } : undefined}
            />
          </div>
        </div>
      )}
    </div>
  )
}
