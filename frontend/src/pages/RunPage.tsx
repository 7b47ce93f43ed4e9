// One run, live: status and actions, the error summary, the yield form, the graph coloured by
// node state with a legend and a per-node side panel, a timeline and the event log.
import { useMemo, useState } from 'react'
import { getWorkflow } from '../api/client'
import { ErrorBox } from '../components/ErrorBox'
import { ErrorSummary } from '../components/ErrorSummary'
import { EventLog } from '../components/EventLog'
import { NodePanel } from '../components/NodePanel'
import { originalOf, RunActions } from '../components/RunActions'
import { RunStartPanel } from '../components/RunStartPanel'
import { RunTimeline } from '../components/RunTimeline'
import { StatusBadge, StatusLegend } from '../components/StatusBadge'
import { EdgeLegend, WorkflowGraphView } from '../components/WorkflowGraphView'
import { YieldForm } from '../components/YieldForm'
import { elapsedMs, formatClock, formatDuration, formatTime } from '../lib/format'
import { buildGraph, type WorkflowGraph } from '../lib/graph'
import { href } from '../lib/router'
import { childrenOf, retryInfo, reusedFrom } from '../lib/runInfo'
import { useApi } from '../lib/useApi'
import { useNow } from '../lib/useNow'
import { useRunView } from '../lib/useRunView'
import { ownerText, useSession } from '../lib/session'
import { JsonBlock } from '../components/JsonBlock'
import { LocalTime } from '../components/LocalTime'

export function RunPage({ runId }: { runId: string }) {
  const view = useRunView(runId)
  const { me } = useSession()
  const run = view.run
  const [selected, setSelected] = useState<string | null>(null)
  const [newRun, setNewRun] = useState(false)
  const now = useNow(Boolean(run && !['succeeded', 'failed', 'cancelled'].includes(run.status)))
  const workflowId = run?.workflow_id ?? null
  const workflow = useApi(
    () => (workflowId ? getWorkflow(workflowId) : Promise.resolve(null)),
    [workflowId],
    `GET /workflows/${workflowId ?? ''}`,
  )

  const graph: WorkflowGraph = useMemo(() => {
    const g = buildGraph(workflow.data?.nodes)
    const known = new Set(g.nodes.map((n) => n.id))
    // Top-level nodes the run knows but the (possibly edited) document does not.
    const extra = Object.entries(run?.nodes ?? {})
      .filter(([id]) => !id.includes('/') && !known.has(id))
      .map(([id, n]) => ({ id, kind: n.kind ?? 'node', detail: '' }))
    return { nodes: [...g.nodes, ...extra], edges: g.edges }
  }, [workflow.data, run?.nodes])

  const statuses = useMemo(() => Object.fromEntries(Object.entries(run?.nodes ?? {}).map(([id, n]) => [id, n.status])), [run?.nodes])
  const notes = useMemo(() => {
    const out: Record<string, string> = {}
    for (const [id, n] of Object.entries(run?.nodes ?? {})) {
      const r = retryInfo(n)
      if (r?.max) out[id] = r.nextAt ? `retry ${r.nextAttempt}/${r.max} at ${formatClock(r.nextAt)}` : `attempt ${r.attempt}/${r.max}`
      const branches = n.detail?.branches
      if (branches && typeof branches === 'object') {
        const states = Object.values(branches as Record<string, string>)
        out[id] = `${states.filter((b) => b === 'succeeded').length}/${states.length} branches`
      } else if (n.kind === 'foreach') {
        const items = childrenOf(run?.nodes ?? {}, id).filter((k) => k.split('/').length === id.split('/').length + 1)
        if (items.length) out[id] = `${items.length} items`
      }
    }
    return out
  }, [run?.nodes])

  const badges = useMemo(
    () => Object.fromEntries(Object.entries(run?.nodes ?? {}).filter(([, n]) => reusedFrom(n)).map(([id]) => [id, 'reused'])),
    [run?.nodes],
  )

  const original = originalOf(runId)
  if (!run) {
    return (
      <div className="page">
        <h1>Run <code>{runId}</code></h1>
        <ErrorBox error={view.error} title="Could not load the run" />
        {!view.error && <div className="muted">loading…</div>}
      </div>
    )
  }
  return (
    <div className="page run-page">
      <div className="row spread">
        <h1>
          Run <code title={run.run_id}>{run.run_id.slice(0, 8)}</code> of <a href={href('workflows', run.workflow_id)}><code>{run.workflow_id}</code></a>{' '}
          <span data-testid="run-status"><StatusBadge status={run.status} /></span>
        </h1>
        <RunActions run={run} events={view.events} onChanged={view.refresh} onNewRun={() => setNewRun(true)} />
      </div>
      <div className="muted small run-meta">
        created {formatTime(run.created_at)} · started {formatTime(run.started_at)} · finished {formatTime(run.finished_at)} · duration{' '}
        <span data-testid="run-duration">{run.duration_ms !== null ? formatDuration(run.duration_ms) : `${formatDuration(elapsedMs(run.started_at ?? run.created_at, null, now))} so far`}</span> · {run.event_count} events
        {run.owner && (
          <> · started by <span data-testid="run-owner">{ownerText(run.owner, me)}</span></>
        )}
        {original && (
          <> · re-run of <a href={href('runs', original)} data-testid="rerun-of">{original.slice(0, 8)}</a></>
        )}
        {run.redrive_of && (
          <>
            {' '}· re-run from the failed node of{' '}
            <a href={href('runs', run.redrive_of)} data-testid="redrive-of">{run.redrive_of.slice(0, 8)}</a>
          </>
        )}
      </div>
      {run.trigger && (
        <div className="run-trigger small" data-testid="run-trigger" data-kind={run.trigger.kind}>
          Started by {run.trigger.kind}{' '}
          <a href={href('workflows', run.workflow_id, 'triggers')}><code>{run.trigger.name}</code></a>
          {run.trigger.time && (
            <>
              {' '}{run.trigger.kind === 'schedule' ? 'for its tick at' : 'from a delivery received'} <LocalTime iso={run.trigger.time} now={now} />
            </>
          )}
        </div>
      )}
      {newRun && (
        <RunStartPanel
          key={run.run_id}
          workflowId={run.workflow_id}
          initial={run.params}
          title="New run from this one"
          note={`The params of run ${run.run_id.slice(0, 8)}, to edit; the server checks them before the run starts.`}
          onClose={() => setNewRun(false)}
        />
      )}
      <ErrorBox error={view.error} title="Could not refresh the run" />
      <ErrorBox error={view.streamError} title="Live events" />
      <ErrorSummary run={run} onSelect={setSelected} />
      {run.waiting && (
        <YieldForm
          runId={run.run_id}
          owner={run.owner}
          waiting={run.waiting}
          context={graph.edges
            .filter((e) => e.target === run.waiting?.node_id && e.kind === 'depends')
            .map((e) => ({ nodeId: e.source, output: run.nodes[e.source]?.output }))}
          onAnswered={view.refresh}
        />
      )}
      <div className="run-layout">
        <div className="card graph-card">
          <div className="row spread">
            <h2>Graph</h2>
            <StatusLegend />
          </div>
          <ErrorBox error={workflow.error} title="The workflow document could not be read; nodes are listed from the run" />
          {workflow.loading && !workflow.data ? (
            <div className="graph-empty muted">loading the graph…</div>
          ) : (
            <WorkflowGraphView graph={graph} statuses={statuses} notes={notes} badges={badges} selected={selected} onSelect={setSelected} height={440} />
          )}
          <EdgeLegend />
        </div>
        {selected && (
          <NodePanel
            nodeId={selected}
            node={run.nodes[selected]}
            nodes={run.nodes}
            childIds={childrenOf(run.nodes, selected)}
            onSelect={setSelected}
            onClose={() => setSelected(null)}
            now={now}
          />
        )}
      </div>
      <div className="card">
        <h2>Timeline</h2>
        <RunTimeline run={run} onSelect={setSelected} now={now} />
      </div>
      <div className="two-col">
        <JsonBlock label="params" value={run.params} />
        <JsonBlock label="result" value={run.result} testId="run-result" />
      </div>
      <EventLog events={view.events} nodes={run.nodes} live={view.live} onSelectNode={setSelected} />
    </div>
  )
}
