"""``paused_gc``: the collector is off inside, restored after (also on error), left off if off."""

from __future__ import annotations

import doctest
import gc

import pytest

import whileai._gc
from whileai._gc import paused_gc


def test_doctests() -> None:
    result = doctest.testmod(whileai._gc)
    assert result.attempted > 0
    assert result.failed == 0


def _fail_while_paused() -> None:
    with paused_gc():
        assert not gc.isenabled()
        raise KeyError("boom")


def test_restored_after_an_error() -> None:
    with pytest.raises(KeyError):
        _fail_while_paused()
    assert gc.isenabled()


def test_left_off_when_it_was_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
