"""``dynamic-tools run`` and ``dynamic-tools runs``: start and watch runs through the REST API.

The CLI never runs the engine itself: it talks to a running server (``--server``, default the
settings' URL), so a run started here is the same durable run the UI and MCP see.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from dynamic_tools.engine import events as ev


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs; a value that parses as JSON keeps its type (``n=3`` is a number)."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"'{pair}' is not key=value")
        try:
            params[key] = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):  # not JSON (or absurdly nested): text
            params[key] = raw
    return params


class RunsClient:
    """The few REST calls the CLI needs."""

    def __init__(self, server: str, token: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=server.rstrip("/"), headers=headers, timeout=30)

    def start(self, workflow_id: str, params: dict[str, Any]) -> dict[str, Any]:
        """Start a run; raises ``httpx.HTTPStatusError`` with the server's error body."""
        response = self.http.post(f"/workflows/{workflow_id}/runs", json={"params": params})
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    def validate(self, content: str, fmt: str) -> dict[str, Any]:
        """The server's verdict on a document (``POST /workflows/validate``); nothing saved."""
        response = self.http.post("/workflows/validate", json={"content": content, "format": fmt})
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    def get(self, run_id: str) -> dict[str, Any]:
        """One run's state."""
        response = self.http.get(f"/runs/{run_id}")
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    def list(self, **filters: Any) -> list[dict[str, Any]]:
        """Runs, newest first."""
        response = self.http.get("/runs", params={k: v for k, v in filters.items() if v})
        response.raise_for_status()
        body = response.json()
        runs: list[dict[str, Any]] = body["runs"] if isinstance(body, dict) else body
        return runs

    def events(self, run_id: str) -> Iterator[dict[str, Any]]:
        """Server-sent events of a run until its terminal event."""
        with self.http.stream("GET", f"/runs/{run_id}/events", timeout=None) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    event: dict[str, Any] = json.loads(line[5:].strip())
                    yield event
                    if isinstance(_typed(event), ev.RunEnded):
                        return


def _typed(event: dict[str, Any]) -> ev.Event | None:
    """The typed event of a streamed one; None for a type this client does not know."""
    try:
        return ev.event_from_dict(event)
    except (ValueError, TypeError):
        return None


def describe_event(event: dict[str, Any]) -> str | None:
    """One line for the progress display, or None for events not worth a line."""
    match _typed(event):
        case ev.NodeStarted(node_id=node, kind=kind):
            return f"[cyan]▶[/] {node} ({kind})"
        case ev.NodeSucceeded(node_id=node):
            return f"[green]✔[/] {node}"
        case ev.NodeFailed(node_id=node, error=error):
            return f"[red]✖[/] {node}: {error}"
        case ev.NodeSkipped(node_id=node, reason=reason):
            return f"[dim]- {node} skipped ({reason or ''})[/]"
        case ev.RetryScheduled(node_id=node) as retry:
            return (
                f"[yellow]↻[/] {node}: attempt {retry.attempt} of "
                f"{retry.max_attempts} in {retry.delay_s:.1f} s"
            )
        case ev.WaitingInput(node_id=node, message=message):
            return f"[magenta]⏸[/] {node} waits: {message}"
        case ev.RunEnded() as ended:
            return f"[bold]run {ended.STATUS}[/]"
    return None


def print_runs(console: Console, runs: list[dict[str, Any]]) -> None:
    """A table of runs."""
    table = Table("run id", "workflow", "status", "started", "duration")
    for run in runs:
        duration = run.get("duration_ms")
        table.add_row(
            run["run_id"],
            run.get("workflow_id", ""),
            run.get("status", ""),
            str(run.get("created_at", "")),
            f"{duration / 1000:.1f} s" if isinstance(duration, int | float) else "",
        )
    console.print(table)


def print_run(console: Console, run: dict[str, Any]) -> None:
    """One run with its nodes."""
    console.print(
        f"[bold]{run['run_id']}[/] {run.get('workflow_id', '')}: {run['status']}", highlight=False
    )
    table = Table("node", "status", "attempts", "error")
    for node_id, node in (run.get("nodes") or {}).items():
        table.add_row(
            node_id, node.get("status", ""), str(node.get("attempts", 0)), node.get("error") or ""
        )
    console.print(table)
    if run.get("result") is not None:
        console.print_json(json.dumps(run["result"]))
    if run.get("error"):
        console.print(f"[red]{run['error'].get('message', run['error'])}[/]", highlight=False)
