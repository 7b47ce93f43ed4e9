"""What every browser test of the console's layout shares: the two sizes, the pages and what
shows once each is ready, the check that nothing is wider than the screen, and axe-core."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.ui.conftest import screenshot
from tests.support.axe import axe_violations

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 900}
SIZES = {"phone": PHONE, "desktop": DESKTOP}
THEMES = ("light", "dark")
#: the page background of each theme (the palette in frontend/src/styles.css)
BACKGROUNDS = {"light": "rgb(246, 248, 250)", "dark": "rgb(18, 23, 28)"}

OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const scrolled = (e) => {  // inside a scrolling box: fine
    for (let p = e.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (['auto', 'scroll', 'hidden'].includes(s.overflowX) && p !== document.body
          && p !== document.documentElement) return true;
    }
    return false;
  };
  const name = (e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`;
  const all = [...document.querySelectorAll('body *')];
  const wide = all
    .filter((e) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.right > width + 1 && !scrolled(e);
    })
    .slice(0, 5)
    .map((e) => `${name(e)} right=${Math.round(e.getBoundingClientRect().right)}`);
  // text that runs out of its box (a long word that does not wrap)
  const spill = all
    .filter((e) => getComputedStyle(e).overflowX === 'visible' && e.scrollWidth > e.clientWidth + 1
      && e.getBoundingClientRect().left + e.scrollWidth > width + 1 && !scrolled(e)
      && ![...e.children].some((c) => c.getBoundingClientRect().right > width + 1))
    .slice(0, 5)
    .map((e) => `${name(e)} text to ${Math.round(e.getBoundingClientRect().left + e.scrollWidth)}`);
  return {scroll: document.documentElement.scrollWidth, width, wide, spill};
}"""


# page name → (hash route, what shows once it is ready)
PAGES: dict[str, tuple[str, str]] = {
    "single-shot": ("#/single", "[data-testid=tool-picker]"),
    "tools": ("#/tools", ".tool-card"),
    "catalogs": ("#/catalogs", "h1"),
    "workflows": ("#/workflows", "[data-testid=workflow-list]"),
    "workflow": ("#/workflows/book_flight?run=1", "[data-testid=graph-preview] .react-flow__node"),
    "new-workflow": ("#/workflows/_new", ".cm-editor"),
    "triggers": ("#/workflows/book_flight/triggers", "[data-testid=no-triggers]"),
    "runs": ("#/runs", "[data-testid=run-list]"),
    "run-view": ("#/runs/{done}", "[data-testid=workflow-graph] [data-status=succeeded]"),
    "run-approval": ("#/runs/{waiting}", "[data-testid=yield-form] .yield-message"),
    "run-failed": ("#/runs/{failed}", "[data-testid=error-summary]"),
}


def layout_problems(page: Any, label: str, artifacts: Path) -> list[str]:
    """Page-level horizontal scroll and axe violations of the page as it is now; its screenshot
    is written as ``<label>.png`` either way."""
    problems: list[str] = []
    found = page.evaluate(OVERFLOW)
    if found["scroll"] > found["width"]:
        problems.append(f"{label}: wider than the screen: {found}")
    problems.extend(f"{label}: axe {line}" for line in axe_violations(page))
    screenshot(page, artifacts / f"{label}.png")
    return problems
