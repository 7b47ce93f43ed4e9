"""``POST /workflow``: the single-shot pipeline.

Design: docs/design-sources.md#single-shot-pipeline-design.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from dynamic_tools.api.deps import PipelineDep
from dynamic_tools.api.responses import BODY, errors
from dynamic_tools.selection.models import WorkflowRequest, WorkflowResponse

router = APIRouter(tags=["Workflow"])


@router.post(
    "/workflow",
    response_model=None,
    responses={
        200: {"model": WorkflowResponse, "description": "The pipeline's outcome"},
        **errors(BODY),
    },
    summary="Complete single-shot workflow",
    description="Tool selection by the LLM, API execution, optional formatting. Errors are "
    "reported by stage with HTTP 200 and status 'error'.",
)
async def run_workflow(body: WorkflowRequest, pipeline: PipelineDep, request: Request) -> Response:
    """Run the pipeline for one request (serialised once, without re-validation)."""
    response = await pipeline.run(body)
    metrics = request.app.state.metrics
    metrics.pipeline_runs.labels(response.status, response.error_stage or "").inc()
    metrics.llm_tokens.labels("prompt").inc(response.usage.prompt_tokens)
    metrics.llm_tokens.labels("completion").inc(response.usage.completion_tokens)
    return Response(response.model_dump_json(), media_type="application/json")
