"""Protected Resource Metadata (RFC 9728): where MCP clients learn which issuer to ask.

Two documents, as the MCP authorization specification has clients look for them (the
``resource_metadata`` of a 401's ``WWW-Authenticate`` points at the one for what was asked):

- ``/.well-known/oauth-protected-resource``: the REST API, resource ``<base>``;
- ``/.well-known/oauth-protected-resource/mcp``: the MCP endpoint, resource ``<base>/mcp``.

``<base>`` is ``PUBLIC_BASE_URL`` (or ``http://HOST:PORT``): the URL clients use, which a
client checks the ``resource`` against and asks its token for (RFC 8707); tokens must name it
(``Settings.oauth_audiences``).

Without ``OAUTH_ISSUER`` both answer 404 (``not_found``, naming the setting): RFC 9728 makes an
absent document the way to say "no authorization server", and MCP clients (the ``mcp`` SDK's
among them) then go on to their fallbacks, where metadata with an empty
``authorization_servers`` list is invalid to them (the SDK requires one entry) and would read
as a broken server. Such a server takes ``API_TOKEN`` or API keys as bearer credentials.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import Field

from dynamic_tools.access.authenticate import METADATA_PATH
from dynamic_tools.access.principals import Scope
from dynamic_tools.api.responses import errors
from dynamic_tools.errors import NotFoundError
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.settings import Settings

router = APIRouter(tags=["Access"])


class ProtectedResourceMetadata(LazyModel):
    """RFC 9728 section 2: this server as an OAuth protected resource."""

    resource: str = Field(description="The resource URI tokens must be issued for (aud).")
    authorization_servers: list[str] = Field(description="The issuer whose tokens are taken.")
    scopes_supported: list[str] = Field(description="read, run, author, admin.")
    bearer_methods_supported: list[str] = Field(description="Only the Authorization header.")
    resource_name: str


def _metadata(request: Request, path: str) -> ProtectedResourceMetadata:
    settings: Settings = request.app.state.settings
    if settings.oauth_issuer is None:
        raise NotFoundError(
            "no authorization server is configured (OAUTH_ISSUER is not set): this server "
            "takes API_TOKEN or an API key as its bearer credential",
            context={"setting": "OAUTH_ISSUER"},
        )
    return ProtectedResourceMetadata(
        resource=settings.base_url + path,
        authorization_servers=[settings.oauth_issuer],
        scopes_supported=[s.value for s in Scope],
        bearer_methods_supported=["header"],
        resource_name="Dynamic Tools MCP server" if path else "Dynamic Tools API",
    )


@router.get(
    METADATA_PATH,
    summary="Protected resource metadata (REST API)",
    response_model=ProtectedResourceMetadata,
    responses=errors(404),
)
async def protected_resource(request: Request) -> ProtectedResourceMetadata:
    """RFC 9728 metadata of the REST API: resource ``<base>``, the issuer, the scopes."""
    return _metadata(request, "")


@router.get(
    METADATA_PATH + "/mcp",
    summary="Protected resource metadata (MCP endpoint)",
    response_model=ProtectedResourceMetadata,
    responses=errors(404),
)
async def protected_mcp_resource(request: Request) -> ProtectedResourceMetadata:
    """RFC 9728 metadata of ``/mcp``: resource ``<base>/mcp``, the issuer, the scopes."""
    return _metadata(request, "/mcp")
