"""A session's documents are cached by content and checked again with conditional requests:
an edited ``X-Workflow-URL`` document is seen on the next ``tools/list`` (a second after the
last check at most), an unchanged one costs a ``304`` and no rebuild. The document is served
by a loopback HTTP server that answers ``ETag`` / ``Last-Modified`` and counts what it sent."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI, Request, Response

from tests.support.mcp_client import mcp_client
from tests.support.servers import serve

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
CHECK_S = 1.1  # just over the sources' refetch_s (bootstrap.SESSION_REFETCH_S)


def flows(workflow_id: str) -> str:
    return f"""\
domain: refresh
workflows:
  {workflow_id}:
    description: Search flights
    params:
      origin: {{type: str, required: true}}
    graph:
      search:
        call: search_flights
        args: {{origin: $origin, destination: BCN, date: "2026-12-01"}}
"""


@dataclass
class Document:
    """The served document, how it is validated, and what the server answered."""

    validator: str
    text: str = flows("first")
    modified: str = "Wed, 21 Oct 2026 07:28:00 GMT"
    statuses: list[int] = field(default_factory=list)
    conditions: list[dict[str, str]] = field(default_factory=list)

    def edit(self, text: str) -> None:
        self.text = text
        self.modified = "Thu, 22 Oct 2026 07:28:00 GMT"

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.text.encode()).hexdigest()[:16] + '"'

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/flows.yaml")
        async def get(request: Request) -> Response:
            asked = {
                k: v
                for k, v in request.headers.items()
                if k in ("if-none-match", "if-modified-since")
            }
            self.conditions.append(asked)
            if self.validator == "etag":
                headers = {"ETag": self.etag}
                same = asked.get("if-none-match") == self.etag
            else:
                headers = {"Last-Modified": self.modified}
                same = asked.get("if-modified-since") == self.modified
            status = 304 if same else 200
            self.statuses.append(status)
            body = b"" if same else self.text.encode()
            return Response(
                body, status_code=status, headers=headers, media_type="application/yaml"
            )

        return app


@pytest.fixture(params=["etag", "last_modified"])
def document(request: pytest.FixtureRequest) -> Iterator[tuple[Document, str]]:
    served = Document(request.param)
    with serve(served.app()) as url:
        yield served, f"{url}/flows.yaml"


async def names(client: object) -> set[str]:
    listed = await client.list_tools()  # type: ignore[attr-defined]
    return {t.name for t in listed.tools if t.name.startswith("w_")}


async def test_an_edited_document_is_seen_on_the_next_list_and_an_unchanged_one_costs_a_304(
    start_server: Callable[..., str], document: tuple[Document, str]
) -> None:
    served, url = document
    server = start_server(allowed_target_hosts=[urlsplit(url).netloc])
    async with mcp_client(server, headers={"X-Workflow-URL": url}) as client:
        first = await names(client)
        again = await names(client)  # within the interval: not asked again
        asked_once = list(served.statuses)
        time.sleep(CHECK_S)
        unchanged = await names(client)  # asked again: 304, the same view
        served.edit(flows("second"))
        time.sleep(CHECK_S)
        edited = await names(client)  # asked again: 200, the new document
    assert first == again == unchanged == {"w_first"}
    assert edited == {"w_second"}
    assert asked_once == [200]
    assert served.statuses == [200, 304, 200]
    key = "if-none-match" if served.validator == "etag" else "if-modified-since"
    assert [key in asked for asked in served.conditions] == [False, True, True]
