"""A partner API that records every header it receives, for the session-header tests.

It serves two APIs on one loopback port (test code only):

- the session's own API, described by ``/openapi.json``: ``list_notes`` (``GET /notes``) and
  ``get_note`` (``GET /notes/{note_id}``), which want the session's token
  (:data:`SESSION_TOKEN`, sent by ``X-Target-Headers``);
- a registry tool's API, ``GET /partner/rates`` (not in the document), which wants the tool's
  own bearer secret (:data:`PARTNER_SECRET`, read from the server's tool secrets).

``received`` holds, for every call of either API, its path and its raw header list (names in
lower case, repeats kept), so a test can prove which headers arrived and that none arrived
twice. Workflow documents are served under ``/docs/`` (:data:`FLOWS` calls both APIs).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from tests.support.servers import serve

SESSION_TOKEN = "Bearer session-token-51c0de"
PARTNER_SECRET = "partner-secret-9e3b27"
SECRET_NAME = "PARTNER_TOKEN"
NOTES = [{"id": "n1", "text": "call the airline"}, {"id": "n2", "text": "book the hotel"}]
#: a session's workflows (X-Workflow-URL): they call the registry tool and the session's API
FLOWS = """\
domain: notes
workflows:
  rates_and_notes:
    description: The partner's rate (a registry tool) and this API's notes
    params:
      currency: {type: str, required: true}
    graph:
      rates:
        call: partner_rates
        args: {currency: $currency}
        output: rates
      notes:
        call: notes_execute
        args: {operation: list_notes, arguments: {}}
        output: notes
      note:
        call: get_note
        args: {note_id: n1}
        output: note
    outputs:
      rate: $rates.rate
      first: $notes.0.id
      text: $note.text
  approve_then_rates:
    description: Ask first, then read the partner's rate and one note
    params:
      currency: {type: str, required: true}
    graph:
      ask:
        type: yield
        message: "Read the $currency rate?"
        expects:
          go: {type: bool, required: true}
      rates:
        depends_on: [ask]
        call: partner_rates
        args: {currency: $currency}
        output: rates
      note:
        depends_on: [rates]
        call: get_note
        args: {note_id: n2}
        output: note
    outputs:
      rate: $rates.rate
      text: $note.text
"""


@dataclass(frozen=True)
class Received:
    """One call: its path and its headers as sent (lower-case names, repeats kept)."""

    path: str
    headers: list[tuple[str, str]]

    def all(self, name: str) -> list[str]:
        """Every value of header ``name`` (any case) in this call."""
        return [v for n, v in self.headers if n == name.lower()]

    def one(self, name: str) -> str | None:
        """The value of header ``name``; AssertionError when it came more than once."""
        values = self.all(name)
        assert len(values) <= 1, f"{name} arrived {len(values)} times on {self.path}"
        return values[0] if values else None

    def only_the_partner_credential(self) -> bool:
        """The registry tool's bearer secret, once, and nothing a session gives."""
        return (
            self.one("authorization") == f"Bearer {PARTNER_SECRET}"
            and not self.all("x-team")
            and not self.all("cookie")
            and not any(SESSION_TOKEN in v for _, v in self.headers)
        )


@dataclass
class HeaderApi:
    """The running API: its URL, the documents it serves and what it received."""

    url: str
    documents: dict[str, str]
    received: list[Received] = field(default_factory=list)

    @property
    def openapi(self) -> str:
        """The URL of the session API's OpenAPI document (X-Target-URL)."""
        return f"{self.url}/openapi.json"

    def document(self, name: str) -> str:
        """The URL of a document it serves (X-Workflow-URL)."""
        return f"{self.url}/docs/{name}"

    @property
    def host(self) -> str:
        """host:port, for ALLOWED_TARGET_HOSTS."""
        return self.url.removeprefix("http://")

    def calls(self, prefix: str) -> list[Received]:
        """The calls whose path starts with ``prefix`` (``/notes``, ``/partner``)."""
        return [r for r in self.received if r.path.startswith(prefix)]

    def registry_tool(self) -> str:
        """The YAML of the registry tool ``partner_rates``: bearer auth with its own secret."""
        return f"""\
name: partner_rates
description: Exchange rates of the partner for one currency
api:
  method: GET
  base_url: "{self.url}/partner"
  path: /rates
parameters:
  currency: {{type: string, in: query, required: true, description: "ISO code, e.g. EUR"}}
auth: {{type: bearer, secret: "secret:{SECRET_NAME}"}}
output_schema:
  type: object
  properties: {{currency: {{type: string}}, rate: {{type: number}}}}
"""


def header_app(api: HeaderApi) -> FastAPI:
    """The two APIs, the documents, and the recording middleware."""
    app = FastAPI(title="Notes")

    @app.middleware("http")
    async def record(request: Request, call_next):  # type: ignore[no-untyped-def]
        path = request.url.path
        if path.startswith(("/notes", "/partner")):
            raw = request.headers.raw
            sent = [(n.decode("latin-1").lower(), v.decode("latin-1")) for n, v in raw]
            api.received.append(Received(path, sent))
        response: Response = await call_next(request)
        return response

    def refused(request: Request, wanted: str) -> Response | None:
        given = request.headers.getlist("authorization")
        if given != [wanted]:
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return None

    @app.get("/notes", operation_id="list_notes", summary="List every note")
    async def list_notes(request: Request) -> Response:
        return refused(request, SESSION_TOKEN) or JSONResponse(NOTES)

    @app.get("/notes/{note_id}", operation_id="get_note", summary="Get one note by its id")
    async def get_note(note_id: str, request: Request) -> Response:
        note = next((n for n in NOTES if n["id"] == note_id), None)
        found = JSONResponse(note) if note else JSONResponse({"error": "no note"}, 404)
        return refused(request, SESSION_TOKEN) or found

    @app.get("/partner/rates", include_in_schema=False)
    async def rates(currency: str, request: Request) -> Response:
        answer = JSONResponse({"currency": currency, "rate": 1.08})
        return refused(request, f"Bearer {PARTNER_SECRET}") or answer

    @app.get("/docs/{name}", include_in_schema=False)
    async def document(name: str) -> PlainTextResponse:
        if name not in api.documents:
            return PlainTextResponse("not found", status_code=404)
        return PlainTextResponse(api.documents[name], media_type="text/yaml")

    return app


@contextmanager
def running_header_api(documents: dict[str, str] | None = None) -> Iterator[HeaderApi]:
    """Serve the API on loopback until the block ends."""
    api = HeaderApi(url="", documents=dict(documents or {}))
    with serve(header_app(api)) as url:
        api.url = url
        yield api
