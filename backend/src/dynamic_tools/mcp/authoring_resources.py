"""The authoring resources: the spec, the schema, manifests and catalogs.

URIs use the ``dynamic-tools://`` scheme; names are the design's:

- ``workflow.spec`` — the workflow format reference (markdown, ``docs/workflow-spec.md``);
- ``workflow.schema`` — the JSON Schema of workflow documents;
- ``workflow.manifests`` — id, title, description, path, format and version of each workflow;
- ``workflow.manifest:{workflow_id}`` — a workflow document's raw content (a template);
- ``command.catalog`` — every tool the session can call, with schemas and argument names;
- ``provider.catalog`` — the value providers (see the spec's "Value providers").

The design's own spellings read the same resources: the bare names (``workflow.spec``, …,
``provider.catalog``) and ``workflow.manifest:{workflow_id}`` (also after ``dynamic-tools://``),
listed as a second template.
"""

from __future__ import annotations

import json
from importlib import resources as package_files
from typing import Any

import mcp_types as types

from dynamic_tools.definitions.authoring import WorkflowAuthoring
from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.engine.schema import document_schema
from dynamic_tools.mcp.entries import SessionView
from dynamic_tools.mcp.resources import ExtraResource, ResourceSet

SCHEME = "dynamic-tools://"
MANIFEST = SCHEME + "workflow.manifest/"
SEED_MANIFEST = "workflow.manifest:"  # the design's spelling: workflow.manifest:{workflow_id}


def workflow_spec() -> str:
    """The workflow format reference shipped with the package."""
    return (package_files.files("dynamic_tools") / "docs" / "workflow-spec.md").read_text()


def _resource(name: str, description: str, mime: str) -> types.Resource:
    return types.Resource(uri=SCHEME + name, name=name, description=description, mime_type=mime)


def command_catalog(view: SessionView) -> list[dict[str, Any]]:
    """Every callable tool of the session: name, layer, description, schemas, argument names."""
    commands = []
    for name, entry in view.entries.items():
        schema = entry.tool.input_schema
        config = view.api_tools.get(name)
        commands.append(
            {
                "name": name,
                "layer": entry.layer,
                "description": entry.tool.description,
                "arguments": list(schema.get("properties", {})),
                "required": list(schema.get("required", [])),
                "input_schema": schema,
                "output_schema": entry.tool.output_schema,
                "http_method": config.api.method if config else None,
                "body_arguments": [n for n, p in config.parameters.items() if p.location == "body"]
                if config
                else [],
            }
        )
    return commands


def add_authoring_resources(
    resources: ResourceSet, workflows: WorkflowRepository, authoring: WorkflowAuthoring
) -> None:
    """Register the six resources (and the manifest template) on ``resources``."""

    async def spec(view: SessionView) -> tuple[str, str]:
        return "text/markdown", workflow_spec()

    async def schema(view: SessionView) -> tuple[str, str]:
        return "application/schema+json", json.dumps(document_schema(), indent=2)

    async def manifests(view: SessionView) -> tuple[str, str]:
        items = [
            {
                "id": w.id,
                "title": w.title,
                "description": w.description,
                "path": str(workflows.directory / w.file),
                "format": w.format,
                "version": w.version,
                "valid": w.valid,
            }
            for w in workflows.list()
        ]
        return "application/json", json.dumps({"workflows": items}, indent=2)

    async def commands(view: SessionView) -> tuple[str, str]:
        return "application/json", json.dumps({"commands": command_catalog(view)}, default=str)

    async def providers(view: SessionView) -> tuple[str, str]:
        data = [p.to_dict() for p in authoring.providers()]
        return "application/json", json.dumps({"providers": data}, indent=2)

    async def manifest(view: SessionView, uri: str) -> tuple[str, str] | None:
        bare = uri.removeprefix(SCHEME)
        if uri.startswith(MANIFEST):
            workflow_id = uri[len(MANIFEST) :]
        elif bare.startswith(SEED_MANIFEST):
            workflow_id = bare[len(SEED_MANIFEST) :]
        else:
            return None
        data = workflows.get(workflow_id)  # NotFoundError names the id
        mime = {"yaml": "application/yaml", "json": "application/json", "xml": "application/xml"}
        return mime.get(data.format, "text/plain"), data.content

    readers = {"workflow.spec": spec, "workflow.schema": schema}
    readers |= {"workflow.manifests": manifests, "command.catalog": commands}
    readers |= {"provider.catalog": providers}

    async def bare_name(view: SessionView, uri: str) -> tuple[str, str] | None:
        reader = readers.get(uri)
        return await reader(view) if reader is not None else None

    resources.extra += [
        ExtraResource(
            _resource("workflow.spec", "The workflow format reference.", "text/markdown"), spec
        ),
        ExtraResource(
            _resource(
                "workflow.schema", "JSON Schema of workflow documents.", "application/schema+json"
            ),
            schema,
        ),
        ExtraResource(
            _resource(
                "workflow.manifests",
                "Saved workflows: id, title, description, path, format, version.",
                "application/json",
            ),
            manifests,
        ),
        ExtraResource(
            _resource(
                "command.catalog",
                "Every tool this session can call, with schemas and argument names.",
                "application/json",
            ),
            commands,
        ),
        ExtraResource(
            _resource(
                "provider.catalog",
                "Value providers: list operations whose results feed other operations' inputs.",
                "application/json",
            ),
            providers,
        ),
    ]
    resources.templates_extra += [
        types.ResourceTemplate(
            uri_template=MANIFEST + "{workflow_id}",
            name="workflow.manifest",
            description="A saved workflow document's raw content (workflow.manifest:{id}).",
            mime_type="application/yaml",
        ),
        types.ResourceTemplate(
            uri_template=SEED_MANIFEST + "{workflow_id}",
            name="workflow.manifest:{workflow_id}",
            description="The same as dynamic-tools://workflow.manifest/{workflow_id}, in the "
            "MCP authoring design's spelling.",
            mime_type="application/yaml",
        ),
    ]
    resources.template_readers += [manifest, bare_name]
