#!/usr/bin/env python3
"""Move ``dynamic_tools.runtime`` into ``dynamic_tools.definitions`` and ``dynamic_tools.execution``.

Run from the repository root on a tree that still has (or still imports) ``runtime/``:

    python3 scripts/move_runtime.py            # rewrite in place (git mv + imports + docs)
    python3 scripts/move_runtime.py --check    # list what still names the old paths; exit 1 if any

It is idempotent: on a tree already moved it changes nothing. What it does:

1. ``git mv`` every module still under ``backend/src/dynamic_tools/runtime/`` to its new home
   (``MODULES``); a module it does not know goes to ``execution/`` and is reported.
2. Rewrites imports in ``backend/src``, ``backend/tests``, ``backend/bench`` and ``scripts``:
   ``from dynamic_tools.runtime.X import a, b`` becomes the new module, and imports from the old
   ``runtime.durable`` (which did five jobs) are split by name over ``durable_config``,
   ``presence``, ``durable_workflows``, ``durable_client`` and ``durable_launcher``
   (``DURABLE_NAMES``; an unknown name goes to ``durable_launcher`` and is reported). Dotted
   strings such as ``"dynamic_tools.runtime.durable.DurableLauncher"`` (monkeypatch targets)
   are rewritten the same way.
3. Renames the symbols renamed by the move (``RENAMES``: the step-order view is
   ``step_order``, not ``step_plan``; private helpers of the old ``durable.py`` became public
   in their own modules).
4. Rewrites file paths such as ``runtime/workflow_files.py`` in ``docs/``, ``README.md`` and the
   ``backend/pyproject.toml`` import-linter contracts.

The script never formats code; run ``ruff check --fix`` (import order) and ``ruff format`` after.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = "dynamic_tools"
SRC = Path("backend/src/dynamic_tools")

MODULES: dict[str, str] = {
    "authoring": "definitions.authoring",
    "workflow_files": "definitions.files",
    "workflow_repository": "definitions.repository",
    "workflow_plan": "definitions.step_views",
    "dry_run": "execution.dry_run",
    "durable": "execution.durable_launcher",
    "durable_steps": "execution.durable_steps",
    "journal_lock": "execution.journal_lock",
    "launcher": "execution.launcher",
    "reconcile": "execution.reconcile",
    "runs": "execution.runs",
    "tool_runner": "execution.tool_runner",
}

# Where each top-level name of the old runtime/durable.py lives now.
DURABLE_NAMES: dict[str, str] = {
    **dict.fromkeys(
        [
            "APP_VERSION",
            "RUN_QUEUE",
            "RUN_WORKFLOW",
            "CHILD_WORKFLOW",
            "FINISHED",
            "WAIT_POLL_S",
            "DurableConfig",
            "sqlite_url",
            "enable_wal",
            "dbos_config",
            "outcome_from_dict",
            "epoch_ms",
            "quoted",
            "LEAVE_QUEUE_SQL",
        ],
        "execution.durable_config",
    ),
    **dict.fromkeys(["PRESENCE_WAIT_S", "ExecutorPresence"], "execution.presence"),
    **dict.fromkeys(
        [
            "WorkflowRuntime",
            "_runtime",
            "_current",
            "_plan_of",
            "_interpreter",
            "_start_child",
            "run_workflow",
            "run_child_workflow",
            "Existing",
            "yield_owner",
            "statuses_to_ids",
            "install_runtime",
            "clear_runtime",
            "runtime_installed",
        ],
        "execution.durable_workflows",
    ),
    "DurableRunClient": "execution.durable_client",
    "DurableLauncher": "execution.durable_launcher",
}

# Symbols renamed by the move (word-boundary replacement in Python files).
RENAMES: dict[str, str] = {
    "step_plan": "step_order",
    "_Runtime": "WorkflowRuntime",
    "_epoch_ms": "epoch_ms",
    "_quoted": "quoted",
    "_statuses_to_ids": "statuses_to_ids",
    "_LEAVE_QUEUE": "LEAVE_QUEUE_SQL",
}
# Only applied in files that imported from the modules these came from.
RENAME_SOURCES = {"workflow_plan", "workflow_repository", "durable"}

PY_ROOTS = [
    Path("backend/src"),
    Path("backend/tests"),
    Path("backend/bench"),
    Path("scripts"),
]
TEXT_FILES = [Path("README.md"), Path("backend/pyproject.toml"), Path("docs")]

warnings: list[str] = []


def target_of(module: str, name: str | None = None) -> str:
    """The new dotted module (under ``dynamic_tools``) for ``runtime.<module>[.name]``."""
    if module == "durable" and name is not None:
        new_name = RENAMES.get(name, name)
        if new_name not in DURABLE_NAMES:
            warnings.append(
                f"runtime.durable.{name}: unknown name, sent to durable_launcher"
            )
        return DURABLE_NAMES.get(new_name, "execution.durable_launcher")
    if module not in MODULES:
        warnings.append(f"runtime.{module}: unknown module, sent to execution.{module}")
        return f"execution.{module}"
    return MODULES[module]


def move_files() -> None:
    old = SRC / "runtime"
    if not old.is_dir():
        return
    for path in sorted(old.glob("*.py")):
        if path.name == "__init__.py":
            continue
        dest = SRC / (target_of(path.stem).replace(".", "/") + ".py")
        dest.parent.mkdir(exist_ok=True)
        init = dest.parent / "__init__.py"
        if not init.exists():
            init.write_text(f'"""{dest.parent.name.capitalize()} of workflows."""\n')
            subprocess.run(["git", "add", str(init)], check=True)
        if dest.exists():
            warnings.append(f"{path} -> {dest}: target exists; merge by hand")
            continue
        subprocess.run(["git", "mv", str(path), str(dest)], check=True)
    if (old / "__init__.py").exists():
        subprocess.run(["git", "rm", "-q", str(old / "__init__.py")], check=True)


FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from dynamic_tools\.runtime\.(?P<mod>\w+) import "
    r"(?P<names>\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)",
    re.MULTILINE,
)
FROM_PACKAGE = re.compile(
    r"^(?P<indent>[ \t]*)from dynamic_tools\.runtime import (?P<names>\([^)]*\)|[^\n]*)",
    re.MULTILINE,
)
DOTTED = re.compile(r"dynamic_tools\.runtime\.(?P<mod>\w+)(?:\.(?P<name>\w+))?")


def split_names(text: str) -> list[str]:
    text = text.strip().strip("()").replace("\\\n", " ")
    text = re.sub(r"#[^\n]*", "", text)
    return [part.strip() for part in text.split(",") if part.strip()]


def import_lines(indent: str, by_module: dict[str, list[str]]) -> str:
    lines = []
    for module, names in by_module.items():
        joined = ", ".join(names)
        line = f"{indent}from {PACKAGE}.{module} import {joined}"
        if len(line) > 99:
            body = "".join(f"{indent}    {n},\n" for n in names)
            line = f"{indent}from {PACKAGE}.{module} import (\n{body}{indent})"
        lines.append(line)
    return "\n".join(lines)


def rewrite_from(match: re.Match[str]) -> str:
    module = match["mod"]
    by_module: dict[str, list[str]] = {}
    for entry in split_names(match["names"]):
        name, _, alias = entry.partition(" as ")
        name = name.strip()
        new_name = RENAMES.get(name, name) if module in RENAME_SOURCES else name
        target = target_of(module, name if module == "durable" else None)
        shown = f"{new_name} as {alias.strip()}" if alias else new_name
        by_module.setdefault(target, []).append(shown)
    return import_lines(match["indent"], by_module)


def rewrite_package_import(match: re.Match[str]) -> str:
    by_module: dict[str, list[str]] = {}
    for entry in split_names(match["names"]):
        name = entry.split(" as ")[0].strip()
        package = target_of(name).split(".")[0]
        by_module.setdefault(package, []).append(
            entry.replace(name, target_of(name).split(".")[1])
        )
    return import_lines(match["indent"], by_module)


def rewrite_dotted(match: re.Match[str]) -> str:
    module, name = match["mod"], match["name"]
    if module == "durable" and name is not None:
        return f"{PACKAGE}.{target_of(module, name)}.{RENAMES.get(name, name)}"
    suffix = f".{name}" if name else ""
    return f"{PACKAGE}.{target_of(module)}{suffix}"


def rewrite_python(text: str) -> str:
    imported: set[str] = set()
    for match in FROM_IMPORT.finditer(text):
        if match["mod"] in RENAME_SOURCES:
            imported.update(
                e.split(" as ")[0].strip() for e in split_names(match["names"])
            )
    text = FROM_IMPORT.sub(rewrite_from, text)
    text = FROM_PACKAGE.sub(rewrite_package_import, text)
    text = DOTTED.sub(rewrite_dotted, text)
    for old, new in RENAMES.items():
        if old in imported and old != "step_plan":
            text = re.sub(rf"\b{old}\b", new, text)
    # ``step_plan`` was the view function and the authoring/repository method; the route
    # function (``async def step_plan``) and the MCP tool name ``workflow.step_plan`` keep it.
    text = re.sub(
        r"(?<!async def )(?<!workflow\.)\bstep_plan\b(?=\()", "step_order", text
    )
    return text


def rewrite_paths(text: str) -> str:
    for module in MODULES:
        new = target_of(module).replace(".", "/")
        text = re.sub(rf"\bruntime/{module}\.py\b", f"{new}.py", text)
    text = re.sub(r"dynamic_tools\.runtime\.(\w+)", lambda m: rewrite_dotted(m), text)
    return text


def files(roots: list[Path], pattern: str) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            found.extend(p for p in root.rglob(pattern) if ".venv" not in p.parts)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="report old paths, change nothing"
    )
    args = parser.parse_args()
    here = Path(__file__).resolve()
    changed: list[Path] = []
    if not args.check:
        move_files()
    targets = [
        (p, rewrite_python) for p in files(PY_ROOTS, "*.py") if p.resolve() != here
    ]
    targets += [(p, rewrite_paths) for p in files(TEXT_FILES, "*.md")]
    for path, rewrite in targets:
        text = path.read_text()
        new = rewrite(text)
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new)
    for path in files(TEXT_FILES, "*.md"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"dynamic_tools/runtime/(?!\w+\.py)|\bruntime/`", line):
                warnings.append(
                    f"{path}:{number}: names the runtime/ directory; reword by hand"
                )
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    verb = "would change" if args.check else "changed"
    for path in changed:
        print(f"{verb}: {path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
