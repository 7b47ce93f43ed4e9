"""The XML workflow format: read into the mapping its YAML form gives, or refused precisely."""

from __future__ import annotations

import pytest
import yaml

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.xml_format import MAX_XML_DEPTH, xml_to_mapping
from dynamic_tools.errors import WorkflowInvalidError
from tests.conftest import EXAMPLES

SMALL = """<workflows domain="travel" version="1.0">
  <workflow id="cancel">
    <params><param name="booking_id" type="string" required="true"/></params>
    <graph>
      <step id="cancel">
        <call tool="cancel_booking"/>
        <args><arg name="booking_id" value="$booking_id"/></args>
        <output name="cancelled"/>
      </step>
    </graph>
  </workflow>
</workflows>"""


def test_the_bundled_xml_example_loads_like_any_document() -> None:
    text = (EXAMPLES / "workflows" / "cancel_trip.xml").read_text()
    loaded = load_document(text, name="cancel_trip.xml")
    assert loaded.document.domain == "travel_booking" and "cancel_trip" in loaded.document.workflows


def test_a_small_document_gives_the_mapping_of_its_yaml_form() -> None:
    mapping = xml_to_mapping(SMALL)
    assert mapping["domain"] == "travel"
    workflow = mapping["workflows"]["cancel"]
    assert workflow["params"]["booking_id"]["required"] is True
    node = workflow["graph"]["cancel"]
    assert node["call"] == "cancel_booking" and node["output"] == "cancelled"
    assert node["args"] == {"booking_id": "$booking_id"}
    same = yaml.safe_load(
        "domain: travel\nversion: '1.0'\nworkflows:\n  cancel:\n"
        "    params: {booking_id: {type: string, required: true}}\n"
        "    graph:\n      cancel:\n        call: cancel_booking\n        output: cancelled\n"
        "        args: {booking_id: $booking_id}\n"
    )
    assert (
        load_document(SMALL, name="x.xml").document
        == load_document(yaml.safe_dump(same), name="x.yaml").document
    )


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("<workflows><workflow id='a'>", "syntax"),
        ("<flows/>", "xml_root"),
        ("<workflows><thing/></workflows>", "xml_element"),
        ("<workflows><workflow/></workflows>", None),  # a workflow without its id
        (
            '<!DOCTYPE x [<!ENTITY e "boom">]><workflows domain="&e;"/>',
            "unsafe_xml",
        ),
        (
            "<workflows>"
            + "<a>" * (MAX_XML_DEPTH + 5)
            + "</a>" * (MAX_XML_DEPTH + 5)
            + "</workflows>",
            "max_depth",
        ),
    ],
)
def test_bad_documents_are_refused_with_their_rule(text: str, rule: str | None) -> None:
    with pytest.raises(WorkflowInvalidError) as refused:
        xml_to_mapping(text)
    violation = refused.value.violations[0]
    if rule is not None:
        assert violation["rule"] == rule
    assert violation["path"] and violation["message"]
