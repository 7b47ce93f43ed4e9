"""Webhook deliveries: a signed POST starts one run of the workflow (docs/triggers.md).

A delivery to ``/hooks/{workflow_id}/{name}`` is taken in this order, and the first thing
wrong answers (nothing is recorded and no run starts):

1. the workflow and its webhook exist (404), the hook is not over its rate (429);
2. the signature holds: the Standard Webhooks scheme (``webhook-id``, ``webhook-timestamp``
   within the scheme's five minutes, ``webhook-signature`` = HMAC-SHA256 of
   ``id.timestamp.body`` under the secret), checked by the ``standardwebhooks`` library (401);
   the document may turn the hook off (409);
3. the body is JSON (422); the filter decides whether it starts a run; the params map
   (422 naming the param and the reference) and fit the workflow (422 per field);
4. the delivery id is claimed: a redelivery (same id, same body) answers with the first run,
   the same id with another body is refused (409); the run's id is made from the delivery id.

The run belongs to the admin, like a schedule's (a delivery has no caller of its own).
"""

from __future__ import annotations

import binascii
import contextlib
import hashlib
import json
import math
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.triggers import WebhookTrigger, filter_passes, trigger_params
from dynamic_tools.errors import (
    ConfigurationError,
    ConflictError,
    ConflictKind,
    DynamicToolsError,
    InvalidInputError,
    NotFoundError,
    RateLimitedError,
    UnauthenticatedError,
)
from dynamic_tools.execution.runs import RunService
from dynamic_tools.execution.scheduler import SCHEDULER, TriggerCounter
from dynamic_tools.persistence.db import utc_now
from dynamic_tools.persistence.run_store import RunTrigger
from dynamic_tools.persistence.run_view import iso
from dynamic_tools.persistence.trigger_store import (
    CLAIMED,
    FILTERED,
    STARTED,
    TriggerStore,
    trigger_run_id,
)
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH, TooDeep, loads_json

if TYPE_CHECKING:
    from standardwebhooks.webhooks import Webhook

TOLERANCE_S = 300
"""How far ``webhook-timestamp`` may be from now: the scheme's (and its library's) 5 minutes."""
SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")
MAX_DELIVERY_ID = 255


@dataclass(frozen=True)
class Accepted:
    """What became of a delivery."""

    run_id: str | None
    duplicate: bool = False
    filtered: bool = False


class RateLimiter:
    """A token bucket per key: ``per_minute`` requests a minute, bursts up to that many."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(per_minute)
        self.clock = clock
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: tuple[str, str]) -> float:
        """0 when a request may go ahead (and counts it), else the seconds until one may."""
        with self._lock:
            now = self.clock()
            tokens, seen = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - seen) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return (1.0 - tokens) / self.rate
            self._buckets[key] = (tokens - 1.0, now)
            return 0.0


class WebhookReceiver:
    """Takes deliveries (see the module docstring)."""

    def __init__(
        self,
        workflows: WorkflowRepository,
        runs: RunService,
        triggers: TriggerStore,
        *,
        secret: Callable[[str], str | None],
        per_minute: int = 120,
        clock: Callable[[], datetime] = utc_now,
        count: TriggerCounter | None = None,
    ) -> None:
        self.workflows = workflows
        self.runs = runs
        self.triggers = triggers
        self.secret = secret
        self.limiter = RateLimiter(per_minute)
        self.clock = clock
        self.count = count or (lambda kind, workflow, trigger, outcome: None)

    def webhook(self, workflow_id: str, name: str) -> WebhookTrigger:
        """The webhook ``name`` of the workflow; 404 when there is none."""
        workflow = self.workflows.workflow(workflow_id)
        for trigger in workflow.triggers:
            if isinstance(trigger, WebhookTrigger) and trigger.name == name:
                return trigger
        raise NotFoundError(
            f"workflow '{workflow_id}' has no webhook '{name}'",
            context={"workflow_id": workflow_id, "webhook": name},
        )

    async def receive(
        self, workflow_id: str, name: str, body: bytes, headers: Mapping[str, str]
    ) -> Accepted:
        """Verify, map and start (or find) the run of one delivery.

        Each delivery to a webhook that exists is counted by outcome (``started``,
        ``duplicate``, ``filtered``, or the error code that refused it).
        """
        hook = self.webhook(workflow_id, name)  # unknown hooks are not counted (any name)
        try:
            accepted = await self._receive(hook, workflow_id, body, headers)
        except DynamicToolsError as exc:
            self.count("webhook", workflow_id, name, exc.code)
            raise
        outcome = "filtered" if accepted.filtered else "duplicate" if accepted.duplicate else None
        self.count("webhook", workflow_id, name, outcome or STARTED)
        return accepted

    async def _receive(
        self, hook: WebhookTrigger, workflow_id: str, body: bytes, headers: Mapping[str, str]
    ) -> Accepted:
        name = hook.name
        wait_s = self.limiter.take((workflow_id, name))
        if wait_s > 0:
            raise RateLimitedError(
                f"webhook '{name}' of '{workflow_id}' takes at most "
                f"{int(self.limiter.capacity)} deliveries a minute",
                retry_after_s=wait_s,
                context={"workflow_id": workflow_id, "webhook": name},
            )
        lowered = {k.lower(): v for k, v in headers.items()}
        self._verify(hook, body, lowered)
        if not hook.enabled:
            raise ConflictError(
                f"webhook '{name}' of '{workflow_id}' is turned off in its document",
                kind=ConflictKind.TRIGGER_DISABLED,
                context={"workflow_id": workflow_id, "webhook": name},
            )
        delivery_id = lowered["webhook-id"]
        payload = _json_body(body)
        received = self.clock()
        trigger = RunTrigger("webhook", name, received)
        digest = hashlib.sha256(body).hexdigest()
        run_id = trigger_run_id(workflow_id, "webhook", name, delivery_id)
        if not _passes(hook, payload, lowered):
            found = await self.triggers.receive(
                workflow_id, name, delivery_id, digest, None, FILTERED
            )
            _check_same(found, digest, delivery_id)
            return Accepted(None, duplicate=found is not None, filtered=True)
        names = {"kind": "webhook", "name": name, "time": iso(received), "id": delivery_id}
        try:
            specs = self.workflows.workflow(workflow_id).params
            optional = [p for p, spec in specs.items() if not spec.required]
            params = trigger_params(hook, names, body=payload, headers=lowered, optional=optional)
        except UnresolvedReferenceError as exc:
            raise InvalidInputError(
                f"the delivery cannot give the params of '{workflow_id}': {exc.message}",
                violations=[
                    {
                        "path": str(exc.node_id or "").removeprefix(f"triggers.{name}."),
                        "rule": "unresolved_reference",
                        "message": exc.message,
                        "actual": exc.reference,
                    }
                ],
                context={"workflow_id": workflow_id, "webhook": name},
            ) from None
        prepared = self.workflows.prepare_run(workflow_id, params)  # 422 per field
        found = await self.triggers.receive(workflow_id, name, delivery_id, digest, run_id, CLAIMED)
        _check_same(found, digest, delivery_id)
        if found is not None and found.outcome != CLAIMED:
            return Accepted(found.run_id, duplicate=True)
        # new, or claimed by a process that died before its run started: start it (its id is
        # the delivery's, so a redelivery racing this one cannot start a second run)
        with contextlib.suppress(ConflictError):  # that race: the run exists
            await self.runs.start_prepared(
                prepared, principal=SCHEDULER, run_id=run_id, trigger=trigger
            )
        await self.triggers.delivered(workflow_id, name, delivery_id)
        return Accepted(run_id, duplicate=found is not None)

    async def describe(self, workflow_id: str, *, base_url: str) -> list[dict[str, Any]]:
        """Each webhook of a workflow: where to POST, its mapping, its latest deliveries."""
        workflow = self.workflows.workflow(workflow_id)  # 404 for an unknown workflow
        out = []
        for hook in workflow.triggers:
            if not isinstance(hook, WebhookTrigger):
                continue
            path = f"/hooks/{workflow_id}/{hook.name}"
            out.append(
                {
                    "name": hook.name,
                    "path": path,
                    "url": base_url.rstrip("/") + path,
                    "enabled": hook.enabled,
                    "secret": hook.secret,
                    "secret_set": bool(self.secret(hook.secret_name)),
                    "params": hook.params,
                    "filter": hook.filter,
                    "last_deliveries": await self.triggers.deliveries(workflow_id, hook.name),
                }
            )
        return out

    def example(self, workflow_id: str, name: str, body: Any, *, base_url: str) -> dict[str, Any]:
        """A delivery of ``body`` signed now with the webhook's secret, and its curl command.

        The secret itself appears nowhere; the signature holds for this body for five minutes,
        and its delivery id once.
        """
        hook = self.webhook(workflow_id, name)
        key = self.secret(hook.secret_name)
        if not key:
            raise ConfigurationError(
                f"the secret {hook.secret} is not set on this server: set it to sign an example",
                context={"workflow_id": workflow_id, "webhook": name},
            )
        text = json.dumps(body, separators=(",", ":"))
        headers = {"content-type": "application/json", **sign(key, text)}
        url = f"{base_url.rstrip('/')}/hooks/{workflow_id}/{name}"
        parts = ["curl -sS -X POST " + shlex.quote(url)]
        parts += [f"-H {shlex.quote(f'{k}: {v}')}" for k, v in headers.items()]
        parts.append(f"--data-raw {shlex.quote(text)}")
        return {"body": text, "headers": headers, "curl": " \\\n  ".join(parts)}

    def _verify(self, hook: WebhookTrigger, body: bytes, headers: Mapping[str, str]) -> None:
        missing = [h for h in SIGNATURE_HEADERS if not headers.get(h)]
        if missing:
            raise _unsigned(f"the delivery has no {', '.join(missing)} header")
        if len(headers["webhook-id"]) > MAX_DELIVERY_ID:
            raise _unsigned(f"webhook-id is longer than {MAX_DELIVERY_ID} characters")
        try:
            sent = float(headers["webhook-timestamp"])
        except ValueError:
            raise _unsigned("webhook-timestamp is not a number of seconds") from None
        skew = self.clock().timestamp() - sent if math.isfinite(sent) else math.inf
        if abs(skew) > TOLERANCE_S:
            raise _unsigned(
                f"webhook-timestamp is {'older' if skew > 0 else 'newer'} than the "
                f"{TOLERANCE_S} s the scheme allows (a replayed or delayed delivery)"
            )
        key = self.secret(hook.secret_name)
        if not key:
            raise ConfigurationError(
                "this webhook cannot check signatures: its secret is not set on the server",
                context={"webhook": hook.name},
            )
        from standardwebhooks.webhooks import WebhookVerificationError

        try:
            signer = signer_for(key)
            signer.verify(body, dict(headers), json_parse=False)
        except (WebhookVerificationError, ValueError, binascii.Error, UnicodeDecodeError):
            raise _unsigned("webhook-signature does not match the body under the secret") from None


def signer_for(secret: str) -> Webhook:
    """The scheme's signer: a ``whsec_<base64>`` secret is decoded, any other used as it is."""
    from standardwebhooks.webhooks import Webhook  # loaded with the first delivery

    if secret.startswith("whsec_"):
        return Webhook(secret)
    return Webhook(secret.encode())


def sign(secret: str, body: str, *, delivery_id: str | None = None) -> dict[str, str]:
    """The headers a sender puts on ``body`` (for the UI's example, and tests' senders)."""
    delivery_id = delivery_id or f"msg_{uuid.uuid4().hex}"
    now = datetime.now(UTC)
    return {
        "webhook-id": delivery_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signer_for(secret).sign(delivery_id, now, body),
    }


def _unsigned(reason: str) -> UnauthenticatedError:
    return UnauthenticatedError(f"refused: {reason}", context={"scheme": "standard-webhooks"})


def _json_body(body: bytes) -> Any:
    if not body.strip():
        return None
    try:
        return loads_json(body, MAX_VALUE_DEPTH)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "it is not UTF-8 text"
        raise InvalidInputError(
            f"the delivery's body is not JSON: {reason}",
            violations=[{"path": "body", "rule": "json", "message": reason}],
        ) from None
    except TooDeep as exc:
        raise InvalidInputError(
            f"the delivery's body nests deeper than {exc.limit} levels",
            violations=[{"path": "body", "rule": "max_depth", "message": str(exc)}],
        ) from None


def _passes(hook: WebhookTrigger, body: Any, headers: Mapping[str, str]) -> bool:
    """The filter's verdict; a delivery the filter cannot read (no such field) does not pass."""
    try:
        return filter_passes(hook, body=body, headers=headers)
    except (UnresolvedReferenceError, ExpressionError):
        return False


def _check_same(found: Any, digest: str, delivery_id: str) -> None:
    if found is not None and found.body_sha256 != digest:
        raise ConflictError(
            f"delivery '{delivery_id}' was received before with another body",
            kind=ConflictKind.DELIVERY_REUSED,
            context={"delivery_id": delivery_id},
        )


__all__ = ["TOLERANCE_S", "Accepted", "RateLimiter", "WebhookReceiver", "sign", "signer_for"]
