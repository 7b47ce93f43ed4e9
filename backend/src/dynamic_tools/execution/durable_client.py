"""A client of durable runs for processes that do not execute them (the CLI, tools)."""

from __future__ import annotations

from typing import Any

from dbos import (
    DBOSClient,
    DBOSPortableJSONSerializer,
    WorkflowHandleAsync,
)
from dbos import error as dbos_errors

from dynamic_tools.engine.state import RunOutcome
from dynamic_tools.errors import NotFoundError
from dynamic_tools.execution.durable_config import (
    FINISHED,
    WAIT_POLL_S,
    DurableConfig,
    outcome_from_dict,
)
from dynamic_tools.execution.durable_steps import (
    CANCEL_ATTRIBUTE,
)
from dynamic_tools.execution.durable_workflows import statuses_to_ids, yield_owner
from dynamic_tools.execution.launcher import yield_step_name


class DurableRunClient:
    """Answers, cancels and waits for durable runs from a process that did not launch DBOS.

    For the CLI and tests (rule 9): it talks to the system database through a ``DBOSClient``
    and never calls ``DBOS.launch()``. Close it with :meth:`close`.
    """

    def __init__(self, config: DurableConfig) -> None:
        self.config = config
        self._client = DBOSClient(
            system_database_url=config.database_url,
            dbos_system_schema=None if config.is_sqlite else config.schema,
            serializer=DBOSPortableJSONSerializer(),
            application_name=config.app_name,
        )

    async def resume(self, run_id: str, node_id: str, values: dict[str, Any]) -> None:
        """Send the answer of the yield ``node_id``; delivered even if no process runs now."""
        target = await yield_owner(run_id, node_id, self._existing)
        await self._client.send_async(target, values, topic=yield_step_name(node_id))

    async def cancel(self, run_id: str) -> None:
        """Record a cancel request; the process executing the run (now or later) acts on it."""
        status = await self.status(run_id)
        if status is None:
            raise NotFoundError(f"run '{run_id}' does not exist", context={"run_id": run_id})
        if status in FINISHED:
            return
        await self._client.update_workflow_attributes_async(
            run_id, {CANCEL_ATTRIBUTE: True}, merge=True
        )

    async def wait(self, run_id: str) -> RunOutcome:
        """The outcome of a run, once it has ended."""
        handle: WorkflowHandleAsync[dict[str, Any]]
        try:
            handle = await self._client.retrieve_workflow_async(run_id)
        except dbos_errors.DBOSNonExistentWorkflowError:
            raise NotFoundError(
                f"run '{run_id}' does not exist", context={"run_id": run_id}
            ) from None
        return outcome_from_dict(await handle.get_result(polling_interval_sec=WAIT_POLL_S))

    async def status(self, run_id: str) -> str | None:
        """DBOS's status of the run's workflow (``PENDING``, ``SUCCESS``...), None if unknown."""
        statuses = await self._client.list_workflows_async(
            workflow_ids=[run_id], load_input=False, load_output=False
        )
        return statuses[0].status if statuses else None

    async def _existing(self, ids: list[str]) -> set[str]:
        statuses = await self._client.list_workflows_async(
            workflow_ids=ids, load_input=False, load_output=False
        )
        return statuses_to_ids(statuses)

    def close(self) -> None:
        """Release the database connections."""
        self._client.destroy()
