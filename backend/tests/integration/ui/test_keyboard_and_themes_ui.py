"""The console from the keyboard and in both themes, in a real browser: the skip link is the first
tab stop and lands on the page; a focused control shows a ring; Enter or Space on a graph node
opens its panel and Escape closes it, focus going back to the node; Escape closes the phone menu;
graph text is at least 12 px at the default zoom; the theme follows the system and the toggle
pins one, kept across reloads."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from tests.integration.ui.layout_checks import BACKGROUNDS, PHONE

# Every text of the graph's nodes and edge labels, at its size on screen (CSS size x zoom).
GRAPH_TEXT_PX = """() => {
  const viewport = document.querySelector('.react-flow__viewport');
  const zoom = new DOMMatrixReadOnly(getComputedStyle(viewport).transform).a;
  const texts = [...document.querySelectorAll(
      '.react-flow__node *, .react-flow__edge-textwrapper text, .react-flow__edge-text')]
    .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()));
  return {zoom, sizes: texts.map((e) => parseFloat(getComputedStyle(e).fontSize) * zoom)};
}"""


def test_the_skip_link_is_the_first_tab_stop_and_focus_is_visible(
    page: Page, ui_server: str
) -> None:
    page.goto(f"{ui_server}/ui/#/runs")
    expect(page.get_by_test_id("run-list")).to_be_visible()
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()  # shown while focused
    outline = skip.evaluate("(e) => getComputedStyle(e).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    assert page.url.endswith("#/runs")  # the route stays
    # the next tab stop is inside the page, past the navigation
    page.keyboard.press("Tab")
    inside = page.evaluate("document.activeElement.closest('main') !== null")
    assert inside
    ring = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert ring != "none"


def test_graph_nodes_open_from_the_keyboard_and_escape_closes_the_panel(
    page: Page, ui_server: str, runs: dict[str, str]
) -> None:
    page.goto(f"{ui_server}/ui/#/runs/{runs['done']}")
    graph = page.get_by_test_id("workflow-graph")
    expect(graph.locator("[data-status=succeeded]").first).to_be_visible()
    node = graph.locator(".react-flow__node").first
    node_id = node.get_attribute("data-id")
    node.focus()
    page.keyboard.press("Enter")
    panel = page.get_by_test_id("node-panel")
    expect(panel).to_have_attribute("data-node", str(node_id))
    expect(panel).to_be_focused()
    page.keyboard.press("Escape")
    expect(panel).to_have_count(0)
    expect(node).to_be_focused()  # back where it was opened
    page.keyboard.press(" ")
    expect(panel).to_have_attribute("data-node", str(node_id))

    found = page.evaluate(GRAPH_TEXT_PX)
    assert found["sizes"], "no graph text found"
    assert min(found["sizes"]) >= 12, found


def test_escape_closes_the_phone_menu(browser: Browser, ui_server: str) -> None:
    context = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        page.goto(f"{ui_server}/ui/#/runs")
        menu = page.get_by_role("button", name="Menu")
        menu.click()
        link = page.get_by_role("navigation").get_by_role("link", name="Workflows")
        expect(link).to_be_visible()
        expect(menu).to_have_attribute("aria-expanded", "true")
        page.keyboard.press("Escape")
        expect(link).to_be_hidden()
        expect(menu).to_have_attribute("aria-expanded", "false")
        expect(menu).to_be_focused()
    finally:
        context.close()


def test_the_theme_follows_the_system_and_the_toggle_pins_one(
    browser: Browser, ui_server: str
) -> None:
    context = browser.new_context(color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(f"{ui_server}/ui/#/tools")
        body = "getComputedStyle(document.body).backgroundColor"
        toggle = page.get_by_label("Colour theme")
        expect(toggle).to_have_value("system")
        assert page.evaluate(body) == BACKGROUNDS["dark"]  # the system's choice
        toggle.select_option("light")
        assert page.evaluate(body) == BACKGROUNDS["light"]
        page.reload()
        expect(page.get_by_label("Colour theme")).to_have_value("light")  # kept
        assert page.evaluate(body) == BACKGROUNDS["light"]
        page.get_by_label("Colour theme").select_option("system")
        assert page.evaluate(body) == BACKGROUNDS["dark"]
        page.emulate_media(color_scheme="light")  # the system changes its mind
        assert page.evaluate(body) == BACKGROUNDS["light"]
    finally:
        context.close()
