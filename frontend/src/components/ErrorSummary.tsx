// Why a run failed, pointing at the node: the run's error, and the first failed node when the
// failure started elsewhere (e.g. retries exhausted, then a fallback error node).
import type { RunDetail } from '../api/types'
import { failureSummary } from '../lib/runInfo'

export function ErrorSummary({ run, onSelect }: { run: RunDetail; onSelect: (id: string) => void }) {
  const summary = failureSummary(run)
  if (!summary) return null
  return (
    <div className="error-box run-error" role="alert" data-testid="error-summary">
      <div className="error-title">
        Run {run.status}
        {summary.nodeId && (
          <>
            {' '}at node{' '}
            <button type="button" className="link" onClick={() => onSelect(summary.nodeId as string)} data-testid="error-node">
              {summary.nodeId}
            </button>
          </>
        )}
        : {summary.message}
      </div>
      {summary.apiSaid && (
        <div className="api-said" data-testid="error-api-said">
          {summary.apiCall ? <>{summary.apiCall}: </> : null}the API said <strong>{summary.apiSaid}</strong>
        </div>
      )}
      {summary.rootCause && (
        <div>
          First failure: <button type="button" className="link" onClick={() => onSelect(summary.rootCause!.nodeId)}>{summary.rootCause.nodeId}</button> — {summary.rootCause.error}
        </div>
      )}
      {summary.failedNodes.length > 1 && <div className="muted small">failed nodes: {summary.failedNodes.map((f) => f.nodeId).join(', ')}</div>}
    </div>
  )
}
