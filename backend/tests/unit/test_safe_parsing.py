"""Nesting measured without recursion, before a parser or walker recurses."""

from __future__ import annotations

import gc
import pickle

import pytest

from dynamic_tools.safe_parsing import (
    TooDeep,
    check_depth,
    deeper_than,
    find_too_deep,
    gc_paused,
    loads_json,
    yaml_too_deep,
)
from tests.support.hostile import nested_json, nested_object_json


def test_depth_counts_containers_and_names_the_path() -> None:
    data = {"a": [{"b": 1}], "c": 2}
    assert find_too_deep(data, 3) is None
    assert find_too_deep(data, 2) == ("a", 0)
    assert find_too_deep("scalar", 0) is None
    with pytest.raises(TooDeep) as caught:
        check_depth({"x": {"y": {"z": {}}}}, 2)
    assert caught.value.path == ("x", "y") and "x.y" in str(caught.value)


def test_the_level_by_level_measure_agrees_with_the_path_walk_at_every_limit() -> None:
    # mixed shapes: a deep branch beside shallow ones, empty containers, lists of scalars,
    # a dict subclass (still a container)
    class Mapping(dict[str, object]):
        pass

    deep: object = {}
    for _ in range(7):
        deep = [1, "x", {"k": deep, "s": None}]
    samples = [
        {},
        [],
        "scalar",
        {"a": [], "b": {"c": [1, 2, {}]}, "d": 3},
        [[[[]]], 1, [[]]],
        {"wide": list(range(50)), "deep": deep},
        Mapping(x=Mapping(y=[Mapping()])),
    ]
    for data in samples:
        for limit in range(20):
            path = find_too_deep(data, limit)
            assert deeper_than(data, limit) is (path is not None), (data, limit)
            if path is not None:  # the path leads to a container past the limit
                node: object = data
                for key in path:
                    node = node[key]  # type: ignore[index]
                assert isinstance(node, dict | list) and len(path) == limit


def test_json_past_the_decoder_and_past_the_limit_are_too_deep() -> None:
    with pytest.raises(TooDeep):
        loads_json(nested_json(100_000), 64)  # the decoder itself gives up
    with pytest.raises(TooDeep) as caught:
        loads_json(nested_object_json(100), 64)
    assert caught.value.path == ("a",) * 64
    assert loads_json(nested_object_json(10), 64) is not None


def test_yaml_stops_at_the_first_level_past_the_limit() -> None:
    # libyaml composing this would overflow the C stack; the event scan stops at level 65.
    assert yaml_too_deep("key: " + nested_json(1_000_000), 64) == 1
    block = "".join(" " * i + "a:\n" for i in range(100)) + " " * 100 + "1\n"
    assert yaml_too_deep(block, 64) == 65
    assert yaml_too_deep("a: {b: [1, 2]}", 64) is None
    assert yaml_too_deep("a: [unclosed", 64) is None  # syntax is the loader's to report


def test_too_deep_pickles_with_its_fields() -> None:
    error = pickle.loads(pickle.dumps(TooDeep(3, ("a", 0), 7)))
    assert (error.limit, error.path, error.line) == (3, ("a", 0), 7)


def test_gc_pauses_nest_and_restore_the_collector_as_it_was() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()


def test_a_gc_pause_ends_when_its_block_raises() -> None:
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("x")
    assert gc.isenabled()
