"""``/workflows``: workflow documents and starting runs.

Documents: list, get, validate, save (with the expected version), rename, delete, step plan,
input preview. Runs: ``POST /workflows/{id}/runs``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response, status
from pydantic import ConfigDict, Field

from dynamic_tools.api.deps import (
    PrincipalDep,
    RegistryDep,
    RunsDep,
    WorkflowsDep,
    note_audit_target,
)
from dynamic_tools.api.responses import BODY, PARAMS, errors
from dynamic_tools.api.run_models import RunStarted
from dynamic_tools.api.workflow_models import (
    ArazzoExportView,
    DryRunReport,
    InputsPreview,
    StepOrder,
    ValidationResult,
    WorkflowList,
    WorkflowsReloaded,
)
from dynamic_tools.definitions.arazzo.export import OPENAPI_FILE, export_arazzo
from dynamic_tools.definitions.files import FILE_NAME
from dynamic_tools.definitions.views import Renamed, SavedDocument, WorkflowDetail
from dynamic_tools.engine.loaders import MAX_DOCUMENT_BYTES
from dynamic_tools.engine.models import IDENTIFIER
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.violations import errors_only

router = APIRouter(prefix="/workflows", tags=["Workflows"])
WorkflowId = Annotated[str, Path(description="A workflow's id.")]
# A PUT names a workflow id or the file name of a new document.
_TARGET = rf"^(?:{IDENTIFIER[1:-1]}|{FILE_NAME.pattern[1:-1]})$"
SaveTarget = Annotated[
    str, Path(pattern=_TARGET, description="A workflow id, or a file name (<name>.yaml|json|xml).")
]

_EXAMPLE = """domain: demo
workflows:
  hello:
    params: {city: {type: str, required: true}}
    graph:
      search: {call: search_hotels, args: {city: $city, checkin: "2026-12-01",
               checkout: "2026-12-02"}, output: hotels}
"""


class DocumentBody(LazyModel):
    """A workflow document as text."""

    model_config = ConfigDict(strict=True, extra="forbid")  # no "1" for 1, no unknown field

    content: str = Field(max_length=MAX_DOCUMENT_BYTES, examples=[_EXAMPLE])
    format: Literal["yaml", "json", "xml"] | None = Field(
        default=None, description="Default: from the file name, else from the content."
    )


class SaveBody(DocumentBody):
    """A document to write, and the version it replaces."""

    expected_version: str | None = Field(
        default=None, description="The version read before editing; a stale one answers 409."
    )
    overwrite: bool = Field(default=False, description="Replace an existing file without one.")
    file: str | None = Field(
        default=None,
        pattern=FILE_NAME.pattern,
        description="File name for a new document (POST); default <first id>.<ext>",
    )


class RenameBody(LazyModel):
    """The new id of a workflow."""

    model_config = ConfigDict(strict=True, extra="forbid")

    new_id: str = Field(pattern=IDENTIFIER)
    expected_version: str | None = None


class RunBody(LazyModel):
    """Parameters of a new run."""

    model_config = ConfigDict(strict=True, extra="forbid")

    params: dict[str, Any] = Field(default_factory=dict)


class DryRunBody(LazyModel):
    """A dry run: params, a mock answer per tool, answers to yields."""

    model_config = ConfigDict(strict=True, extra="forbid")

    params: dict[str, Any] = Field(default_factory=dict)
    mocks: dict[str, Any] = Field(
        default_factory=dict,
        description="tool → body of a 200 answer, or {status_code, body, headers}, "
        "or {responses: [...]} used one per call",
    )
    answers: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="yield node id → values"
    )


@router.get("", summary="List workflows", response_model=WorkflowList)
async def list_workflows(workflows: WorkflowsDep) -> WorkflowList:
    """Every workflow (id, description, file, format, version, params) and file problems."""
    return WorkflowList.model_validate(
        {"workflows": workflows.list(), "problems": [p.to_dict() for p in workflows.problems]}
    )


@router.post(
    "/validate",
    summary="Validate a document",
    responses=errors(BODY),
    response_model=ValidationResult,
)
async def validate_workflow(body: DocumentBody, workflows: WorkflowsDep) -> ValidationResult:
    """Every violation (path, rule, message, line, expected, actual, severity); nothing saved."""
    violations, graphs = await workflows.check_and_draw(body.content, body.format)
    return ValidationResult.model_validate(
        {"valid": not errors_only(violations), "violations": violations, "graphs": graphs}
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    summary="Save a new document",
    responses=errors(BODY, 409),
    response_model=SavedDocument,
)
async def create_workflow(
    request: Request, body: SaveBody, workflows: WorkflowsDep
) -> SavedDocument:
    """Validate and write a document (to ``file``, default ``<first workflow id>.<ext>``)."""
    saved = await workflows.save_checked(
        body.file,
        body.content,
        body.format,
        expected_version=body.expected_version,
        overwrite=body.overwrite,
    )
    note_audit_target(request, f"file={saved.file}")
    return saved


@router.post("/_reload", summary="Reload workflow files", response_model=WorkflowsReloaded)
async def reload_workflows(workflows: WorkflowsDep) -> WorkflowsReloaded:
    """Read the workflows directory again (after editing files by hand)."""
    problems = await asyncio.to_thread(workflows.reload)
    return WorkflowsReloaded.model_validate(
        {
            "workflows": [w.id for w in workflows.list()],
            "problems": [dataclasses.asdict(p) for p in problems],
        }
    )


@router.get(
    "/{workflow_id}",
    summary="Get a workflow (or export it as Arazzo)",
    responses=errors(PARAMS, 404),
    response_model=WorkflowDetail | ArazzoExportView,
)
async def get_workflow(
    workflow_id: WorkflowId,
    workflows: WorkflowsDep,
    registry: RegistryDep,
    format: Annotated[
        Literal["document", "arazzo"],
        Query(description="'arazzo': the workflow as an Arazzo 1.0 document instead."),
    ] = "document",
) -> WorkflowDetail | ArazzoExportView:
    """The workflow's document (content, format, version), parsed form and violations.

    With ``format=arazzo``: the workflow (and the sub-workflows it calls) as an Arazzo 1.0
    document, an OpenAPI 3.1 description of the tools it calls (their servers, auth as
    security schemes naming the same tool secrets, static params as constant parameters), and
    ``warnings`` naming what has no Arazzo or OpenAPI equivalent (parallel, foreach, yield,
    compensation, error nodes, a ``${VAR}`` base URL, a basic auth user name...).
    """
    if format == "document":
        return workflows.get(workflow_id)
    workflows.workflow(workflow_id)  # 404 for an unknown id
    export = export_arazzo(
        workflow_id,
        workflows.definitions(),
        registry.find,
        source_url=f"./{OPENAPI_FILE}",
        source=lambda name: registry.get_source(name) if registry.find(name) else None,
    )
    return ArazzoExportView(
        workflow_id=workflow_id,
        arazzo=export.arazzo,
        openapi=export.openapi,
        openapi_file=OPENAPI_FILE,
        warnings=export.warnings,
    )


@router.put(
    "/{workflow_id}",
    summary="Save the document of a workflow",
    responses=errors(BODY, 409),
    response_model=SavedDocument,
)
async def save_workflow(
    workflow_id: SaveTarget, body: SaveBody, workflows: WorkflowsDep
) -> SavedDocument:
    """Validate and write the document holding ``workflow_id`` (or ``<id>.<ext>``)."""
    return await workflows.save_checked(
        workflow_id,
        body.content,
        body.format,
        expected_version=body.expected_version,
        overwrite=body.overwrite,
    )


@router.post(
    "/{workflow_id}/rename",
    summary="Rename a workflow",
    responses=errors(BODY, 404, 409),
    response_model=Renamed,
)
async def rename_workflow(
    workflow_id: WorkflowId, body: RenameBody, workflows: WorkflowsDep
) -> Renamed:
    """Rename it and every sub-workflow call to it."""
    return await asyncio.to_thread(
        workflows.rename, workflow_id, body.new_id, expected_version=body.expected_version
    )


@router.delete(
    "/{workflow_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete",
    responses=errors(PARAMS, 404, 409),
)
async def delete_workflow(
    workflow_id: WorkflowId,
    workflows: WorkflowsDep,
    expected_version: Annotated[str | None, Query()] = None,
) -> Response:
    """Remove the workflow from its document (409 while another workflow calls it)."""
    await asyncio.to_thread(workflows.delete, workflow_id, expected_version=expected_version)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/{workflow_id}/plan",
    summary="Step plan",
    responses=errors(PARAMS, 404),
    response_model=StepOrder,
)
async def workflow_plan(workflow_id: WorkflowId, workflows: WorkflowsDep) -> StepOrder:
    """The nodes in the order they run, with what activates each and on what condition."""
    return workflows.step_order(workflow_id)


@router.get(
    "/{workflow_id}/inputs",
    summary="Preview inputs",
    responses=errors(PARAMS, 404),
    response_model=InputsPreview,
)
async def workflow_inputs(workflow_id: WorkflowId, workflows: WorkflowsDep) -> InputsPreview:
    """Parameters (type, required, default, example, description) and their JSON Schema."""
    return workflows.preview_inputs(workflow_id)


@router.post(
    "/{workflow_id}/runs",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Start a run",
    responses=errors(BODY, 404),
    response_model=RunStarted,
)
async def start_run(
    workflow_id: WorkflowId, body: RunBody, runs: RunsDep, principal: PrincipalDep
) -> RunStarted:
    """Check the params (422 naming each field) and the document, then start the run.

    The run belongs to the caller.
    """
    run = await runs.start(workflow_id, body.params, principal=principal)
    return RunStarted.model_validate({"run_id": run.run_id, "status": run.status})


@router.post(
    "/{workflow_id}/dry-run",
    summary="Dry run against mock responses (no I/O)",
    responses=errors(BODY, 404),
    response_model=DryRunReport,
)
async def dry_run_workflow(
    workflow_id: WorkflowId, body: DryRunBody, workflows: WorkflowsDep
) -> DryRunReport:
    """Run the workflow against ``mocks``: nothing is called, nothing is recorded."""
    from dynamic_tools.execution.dry_run import dry_run

    prepared = workflows.prepare_run(workflow_id, body.params)
    report = await dry_run(prepared.plan, prepared.params, mocks=body.mocks, answers=body.answers)
    return DryRunReport.model_validate(report)
