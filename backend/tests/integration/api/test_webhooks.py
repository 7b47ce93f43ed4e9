"""Signed webhook deliveries start runs: POST /hooks/{workflow_id}/{name} (docs/triggers.md).

Deliveries are signed as a sender does it, with the Standard Webhooks library's own signer
(HMAC-SHA256 over ``id.timestamp.body``); the server needs no API key for them even when
access control is on.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.mocked_runs import travel_tools, wait_for

TOKEN = "admin-token-for-webhook-tests-4b1"
SECRET = "whsec_" + base64.b64encode(b"partner-shared-secret-0123456789").decode()
DOCUMENT = """\
domain: partners
workflows:
  partner_search:
    params:
      origin: {type: string, required: true}
      destination: {type: string, required: true}
      date: {type: string, format: date, required: true}
      partner: {type: string}
    graph:
      search: {call: search_flights, args: {origin: $origin, destination: $destination,
               date: $date}, output: flights}
    outputs: {count: $flights.length}
    triggers:
      - webhook: order
        secret: secret:PARTNER_HOOK
        params:
          origin: $body.trip.from
          destination: $body.trip.to
          date: $body.trip.date
          partner: $headers.x_partner
        filter: "$body.type == 'order.created'"
      - webhook: closed
        secret: secret:PARTNER_HOOK
        enabled: false
        params: {origin: AMS, destination: BCN, date: "2026-12-01"}
      - webhook: unset
        secret: secret:NOT_SET_ANYWHERE
        params: {origin: AMS, destination: BCN, date: "2026-12-01"}
"""
ORDER = {"type": "order.created", "trip": {"from": "AMS", "to": "BCN", "date": "2026-12-01"}}


def signed(
    body: str | bytes,
    *,
    secret: str = SECRET,
    delivery_id: str = "msg_1",
    at: datetime | None = None,
    **extra: str,
) -> dict[str, str]:
    """The headers a Standard Webhooks sender puts on ``body``."""
    at = at or datetime.now(UTC)
    text = body.decode() if isinstance(body, bytes) else body
    return {
        "content-type": "application/json",
        "webhook-id": delivery_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(delivery_id, at, text),
        **extra,
    }


@pytest.fixture
def settings(tmp_path: Path, make_settings: Callable[..., Settings]) -> Settings:
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "partners.yaml").write_text(DOCUMENT)
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "PARTNER_HOOK").write_text(SECRET + "\n")
    return make_settings(
        registry_config_path=root / "config.yaml",
        seed_examples_from=EXAMPLES,
        api_token=TOKEN,
        secrets_dir=secrets,
        schedules_enabled=False,
        webhook_rate_per_minute=30,
    )


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(create_app(settings, tool_runner=travel_tools())) as client:
        yield client


ADMIN = {"Authorization": f"Bearer {TOKEN}"}


async def deliver(
    client: httpx.AsyncClient, body: Any, *, hook: str = "order", **sign: Any
) -> httpx.Response:
    text = body if isinstance(body, str | bytes) else json.dumps(body)
    return await client.post(
        f"/hooks/partner_search/{hook}", content=text, headers=signed(text, **sign)
    )


async def test_a_signed_delivery_starts_one_run_and_its_redelivery_returns_that_run(
    client: httpx.AsyncClient,
) -> None:
    first = await deliver(client, ORDER, delivery_id="msg_2Yx", **{"X-Partner": "acme"})
    assert first.status_code == 202, first.text
    run_id = first.json()["run_id"]
    assert first.json() == {
        "run_id": run_id,
        "duplicate": False,
        "filtered": False,
        "status_url": f"/runs/{run_id}",
    }
    client.headers.update(ADMIN)
    run = await wait_for(client, run_id)
    assert run["status"] == "succeeded" and run["result"] == {"count": 2}
    assert run["params"] == {
        "origin": "AMS",
        "destination": "BCN",
        "date": "2026-12-01",
        "partner": "acme",
    }
    assert run["trigger"]["kind"] == "webhook" and run["trigger"]["name"] == "order"
    again = await deliver(client, ORDER, delivery_id="msg_2Yx", **{"X-Partner": "acme"})
    assert again.status_code == 202 and again.json()["run_id"] == run_id
    assert again.json()["duplicate"] is True
    listed = (await client.get("/runs", params={"workflow_id": "partner_search"})).json()
    assert [r["run_id"] for r in listed["runs"]] == [run_id]
    assert (
        await deliver(
            client,
            ORDER,
            secret="whsec_" + base64.b64encode(b"another secret").decode(),
            delivery_id="bad",
        )
    ).status_code == 401
    metrics = (await client.get("/metrics")).text
    for outcome in ("started", "duplicate", "unauthorized"):
        assert (
            'dynamic_tools_trigger_events_total{kind="webhook",outcome="' + outcome + '",'
            'trigger="order",workflow="partner_search"} 1.0'
        ) in metrics, outcome


async def test_the_same_delivery_id_with_another_body_is_refused(
    client: httpx.AsyncClient,
) -> None:
    assert (await deliver(client, ORDER, delivery_id="msg_same")).status_code == 202
    changed = {**ORDER, "trip": {**ORDER["trip"], "to": "LIS"}}
    reused = await deliver(client, changed, delivery_id="msg_same")
    assert reused.status_code == 409
    assert reused.json()["error_code"] == "conflict"
    assert "another body" in reused.json()["message"]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"secret": "whsec_" + base64.b64encode(b"not-the-partner-secret").decode()}, "match"),
        ({"at": datetime.now(UTC) - timedelta(minutes=10)}, "older"),
        ({"at": datetime.now(UTC) + timedelta(minutes=10)}, "newer"),
    ],
)
async def test_a_wrong_secret_or_a_timestamp_out_of_tolerance_is_401_and_starts_nothing(
    client: httpx.AsyncClient, change: dict[str, Any], why: str
) -> None:
    answer = await deliver(client, ORDER, **change)
    assert answer.status_code == 401, answer.text
    assert why in answer.json()["message"]
    client.headers.update(ADMIN)
    assert (await client.get("/runs")).json()["total"] == 0


async def test_missing_or_malformed_signature_headers_are_401(client: httpx.AsyncClient) -> None:
    text = json.dumps(ORDER)
    bare = await client.post("/hooks/partner_search/order", content=text)
    assert bare.status_code == 401
    assert "www-authenticate" not in bare.headers  # the signature is the credential, no bearer
    assert "webhook-id, webhook-timestamp, webhook-signature" in bare.json()["message"]
    for name, value in [
        ("webhook-signature", "v1"),
        ("webhook-signature", "v1,@@@"),
        ("webhook-signature", "v2,AAAA"),
        ("webhook-timestamp", "yesterday"),
        ("webhook-timestamp", "nan"),
    ]:
        headers = {**signed(text), name: value}
        answer = await client.post("/hooks/partner_search/order", content=text, headers=headers)
        assert answer.status_code == 401, (name, value, answer.text)


async def test_a_20_mb_body_is_413_and_a_body_that_is_not_json_is_422(
    client: httpx.AsyncClient,
) -> None:
    huge = b'{"pad": "' + b"x" * 20_000_000 + b'"}'
    answer = await client.post(
        "/hooks/partner_search/order", content=huge, headers=signed(huge, delivery_id="big")
    )
    assert answer.status_code == 413
    assert "WEBHOOK_MAX_BODY_BYTES" in answer.text
    broken = await deliver(client, "{not json", delivery_id="broken")
    assert broken.status_code == 422
    assert broken.json()["violations"][0]["path"] == "body"
    deep = "[" * 50_000 + "]" * 50_000
    nested = await deliver(client, deep, delivery_id="deep")
    assert nested.status_code == 422 and nested.json()["violations"][0]["rule"] == "max_depth"
    raw = b"\xff\xfe\x00"
    headers = {**signed("", delivery_id="binary")}
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    to_sign = f"binary.{headers['webhook-timestamp']}.".encode() + raw
    mac = base64.b64encode(hmac.new(key, to_sign, hashlib.sha256).digest()).decode()
    headers["webhook-signature"] = f"v1,{mac}"
    binary = await client.post("/hooks/partner_search/order", content=raw, headers=headers)
    assert binary.status_code in (401, 422)  # the scheme signs text: bytes that are not are refused


async def test_a_delivery_that_cannot_give_the_params_is_422_naming_them(
    client: httpx.AsyncClient,
) -> None:
    no_trip = await deliver(client, {"type": "order.created"}, delivery_id="no_trip")
    assert no_trip.status_code == 422
    violation = no_trip.json()["violations"][0]
    assert violation["path"] == "params.origin" and violation["actual"] == "$body.trip.from"
    bad_date = {**ORDER, "trip": {**ORDER["trip"], "date": "next week"}}
    answer = await deliver(client, bad_date, delivery_id="bad_date")
    assert answer.status_code == 422
    assert answer.json()["violations"][0]["path"] == "params.date"
    # nothing was recorded: the same delivery id may come again, corrected
    assert (await deliver(client, ORDER, delivery_id="bad_date")).status_code == 202


async def test_the_filter_accepts_a_delivery_without_starting_a_run(
    client: httpx.AsyncClient,
) -> None:
    other = await deliver(client, {**ORDER, "type": "order.paid"}, delivery_id="paid")
    assert other.status_code == 202
    assert other.json()["run_id"] is None and other.json()["filtered"] is True
    shapeless = await deliver(client, [1, 2, 3], delivery_id="list")
    assert shapeless.status_code == 202 and shapeless.json()["filtered"] is True


async def test_unknown_turned_off_and_unconfigured_hooks(client: httpx.AsyncClient) -> None:
    text = json.dumps(ORDER)
    unknown = await client.post("/hooks/partner_search/nope", content=text, headers=signed(text))
    assert unknown.status_code == 404
    no_workflow = await client.post("/hooks/nothing/order", content=text, headers=signed(text))
    assert no_workflow.status_code == 404
    closed = await deliver(client, ORDER, hook="closed", delivery_id="c1")
    assert closed.status_code == 409 and closed.json()["context"]["webhook"] == "closed"
    unset = await deliver(client, ORDER, hook="unset", delivery_id="u1")
    assert unset.status_code == 503
    assert "NOT_SET_ANYWHERE" not in unset.text  # an anonymous sender learns no secret's name


async def test_each_hook_is_rate_limited_with_retry_after(client: httpx.AsyncClient) -> None:
    answers = [
        await deliver(client, {**ORDER, "type": "order.paid"}, delivery_id=f"r{i}")
        for i in range(31)
    ]
    assert [a.status_code for a in answers[:30]] == [202] * 30
    assert answers[30].status_code == 429
    assert int(answers[30].headers["retry-after"]) >= 1
    other_hook = await deliver(client, ORDER, hook="closed", delivery_id="other")
    assert other_hook.status_code == 409  # another hook has its own budget


async def test_the_webhooks_view_and_a_signed_example_that_works(
    client: httpx.AsyncClient,
) -> None:
    client.headers.update(ADMIN)
    listed = (await client.get("/workflows/partner_search/webhooks")).json()
    hooks = {h["name"]: h for h in listed["webhooks"]}
    assert hooks["order"]["path"] == "/hooks/partner_search/order"
    assert hooks["order"]["secret"] == "secret:PARTNER_HOOK" and hooks["order"]["secret_set"]
    assert hooks["unset"]["secret_set"] is False
    assert SECRET not in json.dumps(listed)
    example = await client.post(
        "/workflows/partner_search/webhooks/order/example", json={"body": ORDER}
    )
    assert example.status_code == 200, example.text
    shown = example.json()
    assert SECRET not in json.dumps(shown) and "curl" in shown["curl"]
    sent = await client.post(
        "/hooks/partner_search/order", content=shown["body"], headers=shown["headers"]
    )
    assert sent.status_code == 202 and sent.json()["run_id"]
    listed = (await client.get("/workflows/partner_search/webhooks")).json()
    last = listed["webhooks"][0]["last_deliveries"]
    assert last[0]["run_id"] == sent.json()["run_id"]


async def test_a_document_whose_triggers_cannot_work_is_refused_at_save_with_lines(
    client: httpx.AsyncClient,
) -> None:
    client.headers.update(ADMIN)
    broken = DOCUMENT.replace(
        "secret: secret:PARTNER_HOOK\n        params:", "secret: whsec_abc\n        params:", 1
    )
    nightly = (
        "      - schedule: nightly\n"
        '        cron: "0 25 * * *"\n'
        "        timezone: Mars/Olympus\n"
        '        params: {origin: AMS, destination: BCN, date: "2026-12-01"}\n'
    )
    broken = broken.replace("      - webhook: closed", nightly + "      - webhook: closed")
    saved = await client.put(
        "/workflows/partner_search", json={"content": broken, "expected_version": None}
    )
    assert saved.status_code == 422, saved.text
    found = {(v["rule"], v["line"]) for v in saved.json()["violations"] if v.get("line")}
    lines = broken.splitlines()

    def line_of(text: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if text in line)

    expected = {
        ("secret_reference", line_of("whsec_abc")),
        ("bad_cron", line_of('"0 25 * * *"')),
        ("unknown_timezone", line_of("Mars/Olympus")),
    }
    assert expected <= found, found
    assert "whsec_abc" not in saved.text
