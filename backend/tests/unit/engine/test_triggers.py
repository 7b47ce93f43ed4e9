"""Triggers in the workflow document: the same in YAML, JSON and XML, checked at save with lines."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import yaml

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.triggers import (
    ScheduleTrigger,
    WebhookTrigger,
    filter_passes,
    trigger_params,
)
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import WorkflowInvalidError

YAML = """\
domain: shop
workflows:
  check_price:
    params:
      sku: {type: string, required: true}
      checked_at: {type: string}
    graph:
      look: {call: get_price, args: {sku: $sku}}
    triggers:
      - schedule: morning
        cron: "0 7 * * 1-5"
        timezone: Europe/Paris
        params: {sku: ABC-1, checked_at: $trigger.time}
        overlap: buffer_one
        catch_up: 10m
      - webhook: partner_order
        secret: secret:PARTNER_HOOK
        params: {sku: $body.order.sku, checked_at: $headers.x_sent_at}
        filter: "$body.type == 'order.created'"
"""

XML = """\
<workflows domain="shop">
  <workflow id="check_price">
    <params><param name="sku" type="string" required="true"/>
      <param name="checked_at" type="string"/></params>
    <graph><step id="look"><call tool="get_price"/><args><arg name="sku" value="$sku"/></args>
    </step></graph>
    <triggers>
      <schedule name="morning" cron="0 7 * * 1-5" timezone="Europe/Paris" overlap="buffer_one"
                catch_up="10m">
        <params><arg name="sku" value="ABC-1"/><arg name="checked_at" value="$trigger.time"/>
        </params>
      </schedule>
      <webhook name="partner_order" secret="secret:PARTNER_HOOK"
               filter="$body.type == 'order.created'">
        <params><arg name="sku" value="$body.order.sku"/>
          <arg name="checked_at" value="$headers.x_sent_at"/></params>
      </webhook>
    </triggers>
  </workflow>
</workflows>
"""


def _triggers(text: str, fmt: str) -> list[ScheduleTrigger | WebhookTrigger]:
    loaded = load_document(text, fmt=fmt)  # type: ignore[arg-type]
    assert validate_document(loaded).errors == []
    return loaded.document.workflows["check_price"].triggers


def test_yaml_json_and_xml_give_the_same_triggers() -> None:
    from_yaml = _triggers(YAML, "yaml")
    from_json = _triggers(json.dumps(yaml.safe_load(YAML)), "json")
    from_xml = _triggers(XML, "xml")
    assert from_yaml == from_json == from_xml
    schedule, webhook = from_yaml
    assert isinstance(schedule, ScheduleTrigger) and schedule.overlap == "buffer_one"
    assert isinstance(webhook, WebhookTrigger) and webhook.secret_name == "PARTNER_HOOK"


def test_a_cron_schedule_ticks_in_its_time_zone() -> None:
    schedule = _triggers(YAML, "yaml")[0]
    assert isinstance(schedule, ScheduleTrigger)
    friday_evening = datetime(2026, 11, 27, 18, 0, tzinfo=UTC)
    ticks = schedule.next_ticks(friday_evening, 3)
    # 07:00 in Paris (UTC+1 in winter), Monday to Friday: the weekend is skipped
    assert ticks == [
        datetime(2026, 11, 30, 6, 0, tzinfo=UTC),
        datetime(2026, 12, 1, 6, 0, tzinfo=UTC),
        datetime(2026, 12, 2, 6, 0, tzinfo=UTC),
    ]


def test_an_interval_ticks_on_the_same_instants_wherever_it_starts() -> None:
    schedule = ScheduleTrigger(name="poll", every="15m")
    one = schedule.next_ticks(datetime(2026, 11, 27, 10, 1, tzinfo=UTC), 2)
    other = schedule.next_ticks(datetime(2026, 11, 27, 10, 14, 59, tzinfo=UTC), 2)
    assert (
        one
        == other
        == [
            datetime(2026, 11, 27, 10, 15, tzinfo=UTC),
            datetime(2026, 11, 27, 10, 30, tzinfo=UTC),
        ]
    )


def test_a_deliverys_params_come_from_its_body_and_headers() -> None:
    webhook = _triggers(YAML, "yaml")[1]
    assert isinstance(webhook, WebhookTrigger)
    body = {"type": "order.created", "order": {"sku": "XYZ-9"}}
    headers = {"X-Sent-At": "2026-11-27T10:00:00Z"}
    assert trigger_params(webhook, {"kind": "webhook"}, body=body, headers=headers) == {
        "sku": "XYZ-9",
        "checked_at": "2026-11-27T10:00:00Z",
    }
    assert filter_passes(webhook, body=body, headers=headers)
    assert not filter_passes(webhook, body={**body, "type": "order.paid"}, headers=headers)


BAD = """\
domain: shop
workflows:
  check_price:
    params:
      sku: {type: string, required: true}
      qty: {type: integer}
    graph:
      look: {call: get_price, args: {sku: $sku}}
    triggers:
      - schedule: morning
        cron: "0 77 * * *"
        timezone: Europe/Pariss
        params:
          sku: ABC
          qty: many
          colour: red
      - schedule: twice
        cron: "* * * * *"
        every: 5m
        params: {sku: $body.sku}
      - schedule: too_fast
        every: 100ms
        catch_up: soon
        params: {sku: $trigger.when}
      - webhook: partner
        secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
        filter: "$bodyy.type == 'x'"
"""


def test_each_mistake_in_triggers_is_a_violation_with_its_line() -> None:
    report = validate_document(load_document(BAD, fmt="yaml"))
    found = {(v.rule, v.path.removeprefix("workflows.check_price."), v.line) for v in report.errors}
    assert found == {
        ("bad_cron", "triggers.0.cron", 11),
        ("unknown_timezone", "triggers.0.timezone", 12),
        ("param_value", "triggers.0.params.qty", 15),
        ("unknown_param", "triggers.0.params.colour", 16),
        ("schedule_timing", "triggers.1", 17),
        ("trigger_reference", "triggers.1.params.sku", 20),
        ("bad_interval", "triggers.2.every", 22),
        ("bad_duration", "triggers.2.catch_up", 23),
        ("trigger_reference", "triggers.2.params.sku", 24),
        ("secret_reference", "triggers.3.secret", 26),
        ("missing_param", "triggers.3.params", 25),
        ("trigger_reference", "triggers.3.filter", 27),
    }
    secret = next(v for v in report.errors if v.rule == "secret_reference")
    assert "whsec_" not in json.dumps([secret.message, secret.actual])


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"schedule": "a", "every": "1m", "overlap": "queue"}, "overlap"),
        ({"schedule": "a", "webhook": "b"}, "kind"),
        ({"schedule": "bad name", "every": "1m"}, "name"),
    ],
)
def test_a_malformed_entry_is_refused_at_load_with_its_field(entry: dict, message: str) -> None:
    doc = yaml.safe_load(YAML)
    doc["workflows"]["check_price"]["triggers"] = [entry]
    with pytest.raises(WorkflowInvalidError) as caught:
        load_document(json.dumps(doc), fmt="json")
    assert any(message in str(v) for v in caught.value.violations)


def test_two_triggers_with_one_name_are_refused() -> None:
    doc = yaml.safe_load(YAML)
    doc["workflows"]["check_price"]["triggers"][1]["webhook"] = "morning"
    with pytest.raises(WorkflowInvalidError) as caught:
        load_document(json.dumps(doc), fmt="json")
    assert "two triggers are named 'morning'" in str(caught.value.violations)


def test_a_cron_that_matches_no_date_is_refused_and_never_breaks_the_listing() -> None:
    never = ScheduleTrigger(name="feb30", cron="0 0 30 2 *")
    assert never.next_ticks(datetime(2026, 11, 27, tzinfo=UTC), 5) == []
    leap = ScheduleTrigger(name="feb29", cron="0 0 29 2 *")
    assert leap.next_ticks(datetime(2026, 11, 27, tzinfo=UTC), 1) == [
        datetime(2028, 2, 29, tzinfo=UTC)
    ]
    doc = yaml.safe_load(YAML)
    doc["workflows"]["check_price"]["triggers"][0]["cron"] = "0 0 30 2 *"
    report = validate_document(load_document(json.dumps(doc), fmt="json"))
    assert [(v.rule, "never fire" in v.message) for v in report.errors] == [("bad_cron", True)]


def test_an_interval_is_from_a_second_to_a_year() -> None:
    far = ScheduleTrigger(name="far", every="100000000d")
    assert far.next_ticks(datetime(2026, 11, 27, tzinfo=UTC), 2) == []
    doc = yaml.safe_load(YAML)
    doc["workflows"]["check_price"]["triggers"][0] = {
        "schedule": "far",
        "every": "100000000d",
        "params": {"sku": "A"},
    }
    report = validate_document(load_document(json.dumps(doc), fmt="json"))
    assert [v.rule for v in report.errors] == ["bad_interval"]
