"""axe-core (from the UI's npm dev dependencies) run inside a Playwright page.

Every rule axe runs by default is checked (WCAG 2.0-2.2 A and AA, and its best practices such
as heading order and empty table headers); a violation is reported with the elements it was
found on, so a failing test names what to fix.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import REPO

AXE_SCRIPT = REPO / "frontend" / "node_modules" / "axe-core" / "axe.min.js"

_RUN = """async () => {
  const result = await window.axe.run(document, {resultTypes: ['violations']});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')} :: ${(n.failureSummary || '')
      .replace(/\\s+/g, ' ').slice(0, 240)}`),
    count: v.nodes.length,
  }));
}"""


def axe_violations(page: Any) -> list[str]:
    """axe's violations on the page as it is now, one line each (empty when it passes)."""
    if not AXE_SCRIPT.is_file():
        pytest.fail(f"axe-core is missing at {AXE_SCRIPT}: run `make frontend-test` (npm ci)")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=AXE_SCRIPT.read_text())
    found: list[dict[str, Any]] = page.evaluate(_RUN)
    return [
        f"{v['id']} ({v['impact']}, {v['count']} element(s)): {v['help']}\n      "
        + "\n      ".join(v["nodes"])
        for v in found
    ]
