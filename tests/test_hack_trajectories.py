"""hack_scan's trajectory keys read in the row walk: equal exactly when ``trajectory_key``s are."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from whileai.simulations.clean.hack_columns import feature_columns
from whileai.simulations.clean.hack_features import trajectory_key
from whileai.simulations.clean.hack_scan import _trajectories

# A small alphabet, so that rows share texts and calls, with NULs in texts and tool names (a
# key is its calls, a NUL, then the text), nested arguments and arguments trajectory_key cannot
# read.
texts = st.lists(st.sampled_from(["a", "b", "\x00", " ", "\n", ":[]"]), max_size=4).map("".join)
step_st = st.one_of(
    st.fixed_dictionaries({"role": st.just("assistant"), "content": texts}),
    st.fixed_dictionaries(
        {"tool": st.sampled_from(["t", "t\x00", "\x00", "", 5])},
        optional={"arguments": st.sampled_from([
            {}, {"k": "v"}, {"k": "\x00"}, {"k": 1.5}, {"k": None}, {"a": [1]}, {"a": {"b": 1}},
            {"k": "v", "j": True}, "ls", "", None,
        ])},
    ),
)
rows_st = st.lists(st.fixed_dictionaries({
    "final_text": st.one_of(texts, st.none()),
    "steps": st.one_of(st.lists(step_st, max_size=3), st.lists(st.one_of(step_st, st.just(1)),
                                                               max_size=2)),
}), min_size=1, max_size=8)


def _key(row: dict[str, Any]) -> str | None:
    try:
        return trajectory_key(row)
    except AttributeError:  # arguments that are not a mapping ("ls")
        return None


@settings(deadline=None, max_examples=400)
@given(rows=rows_st)
def test_walk_keys_equal_exactly_when_trajectory_keys_do(rows: list[dict[str, Any]]) -> None:
    seen: list[tuple[str, bool]] = []
    feature_columns(rows, texts_seen=seen)
    assert len(seen) == len(rows)
    trajectory = _trajectories(rows, seen)
    keys = [_key(row) for row in rows]
    got: list[Any] = []
    for i, key in enumerate(keys):
        try:
            got.append(trajectory(i))
        except AttributeError:
            assert key is None  # only where trajectory_key itself raises
            got.append(None)
    for i in range(len(rows)):
        for j in range(len(rows)):
            if keys[i] is not None and keys[j] is not None:
                assert (got[i] == got[j]) == (keys[i] == keys[j]), (rows[i], rows[j])


def test_walk_keys_fall_back_where_the_text_is_shared() -> None:
    rows = [{"final_text": "same", "steps": [{"tool": "a"}]},
            {"final_text": "same", "steps": [{"tool": "b"}]},
            {"final_text": "same", "steps": [{"tool": "a"}]},
            {"final_text": "own", "steps": [{"tool": "a", "arguments": {"k": 2}}]}]
    seen: list[tuple[str, bool]] = []
    feature_columns(rows, texts_seen=seen)
    trajectory = _trajectories(rows, seen)
    assert [trajectory(i) for i in range(4)] == [
        (False, trajectory_key(rows[0])), (False, trajectory_key(rows[1])),
        (False, trajectory_key(rows[2])), (True, "own"),
    ]
    assert trajectory(0) == trajectory(2) != trajectory(1)


def test_a_text_holding_a_nul_is_not_a_key() -> None:
    # The keys are equal: "" NUL ":[]\x00b" and "\x00:[]" NUL "b".
    rows = [{"final_text": ":[]\x00b", "steps": []},
            {"final_text": "b", "steps": [{"tool": "\x00"}]}]
    assert trajectory_key(rows[0]) == trajectory_key(rows[1])
    seen: list[tuple[str, bool]] = []
    feature_columns(rows, texts_seen=seen)
    trajectory = _trajectories(rows, seen)
    assert trajectory(0) == trajectory(1)
