"""The per-session event store behind resumable streams."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from dynamic_tools.mcp.event_store import ResumableSessionManager, SessionEventStore


def message(n: int) -> Any:
    return types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/progress", params={"n": n}
    )


async def replayed(store: SessionEventStore, after: str) -> tuple[str | None, list[Any]]:
    sent: list[Any] = []

    async def send(event: Any) -> None:
        params = getattr(event.message, "params", None)
        sent.append((event.event_id, params["n"] if params else "response"))

    stream = await store.replay_events_after(after, send)
    return stream, sent


async def test_a_replay_sends_the_later_events_of_that_stream_only() -> None:
    store = SessionEventStore()
    priming = await store.store_event("1", None)
    first = await store.store_event("1", message(1))
    await store.store_event("2", message(99))  # another request's stream
    second = await store.store_event("1", message(2))
    stream, sent = await replayed(store, priming)
    assert stream == "1" and sent == [(first, 1), (second, 2)]
    assert (await replayed(store, first))[1] == [(second, 2)]
    assert await replayed(store, "unknown-id") == (None, [])


async def test_the_store_is_bounded_and_ids_differ_between_sessions() -> None:
    store = SessionEventStore(max_events=3)
    ids = [await store.store_event("1", message(n)) for n in range(5)]
    assert store.size == 3
    assert (await replayed(store, ids[0]))[0] is None  # too old to replay
    other = SessionEventStore()
    assert not set(ids) & {await other.store_event("1", message(0))}
    assert bool(SessionEventStore())  # the SDK tests a store for truth: never falsy


def test_every_session_gets_a_store_of_its_own() -> None:
    manager = ResumableSessionManager(app=object())  # type: ignore[arg-type]
    first = manager._admit_session(None)
    second = manager._admit_session(None)
    assert first is not None and second is not None
    stores = [first._event_store, second._event_store]
    assert all(isinstance(s, SessionEventStore) for s in stores)
    assert stores[0] is not stores[1]
    assert manager.event_store is None  # nothing shared


async def test_only_the_last_ended_streams_are_kept() -> None:
    store = SessionEventStore(keep_ended=2)
    primings = {}
    for stream in ("1", "2", "3"):
        primings[stream] = await store.store_event(stream, None)
        await store.store_event(stream, message(int(stream)))
        answer = types.JSONRPCResponse(jsonrpc="2.0", id=int(stream), result={})
        await store.store_event(stream, answer)
    live = await store.store_event("4", None)
    await store.store_event("4", message(4))
    assert (await replayed(store, primings["1"]))[0] is None  # ended longest ago: gone
    assert (await replayed(store, primings["3"]))[0] == "3"
    assert (await replayed(store, live))[1][0][1] == 4  # a stream in flight is kept
    assert store.size == 2 * 3 + 2
