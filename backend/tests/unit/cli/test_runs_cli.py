import pytest

from dynamic_tools.cli.runs import describe_event, parse_params


def test_params_keep_json_types_and_reject_bad_pairs() -> None:
    assert parse_params(["origin=AMS", "num_days=3", "flag=true", "tags=[1,2]"]) == {
        "origin": "AMS",
        "num_days": 3,
        "flag": True,
        "tags": [1, 2],
    }
    with pytest.raises(ValueError, match="not key=value"):
        parse_params(["oops"])


def test_progress_lines_show_retries_and_waits() -> None:
    line = describe_event(
        {
            "type": "retry_scheduled",
            "node_id": "reserve",
            "attempt": 2,
            "max_attempts": 3,
            "delay_s": 0.4,
        }
    )
    assert line is not None and "attempt 2 of 3 in 0.4 s" in line
    waiting = describe_event({"type": "waiting_input", "node_id": "ask", "message": "Pick"})
    assert waiting is not None and "ask waits: Pick" in waiting
    assert describe_event({"type": "run_started"}) is None
