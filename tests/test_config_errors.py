"""Settings (WHILEAI_* first, legacy ZEROPROOF_*, empty = unset) and the error hierarchy."""

from __future__ import annotations

from pathlib import Path

import pytest

import whileai
from whileai import config, errors


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for prefix in ("WHILEAI_", "ZEROPROOF_"):
        for name in ("TEST_KNOB", "HOME"):
            monkeypatch.delenv(prefix + name, raising=False)
    return monkeypatch


def test_setting_reads_whileai_first_then_the_legacy_zeroproof_name(
    clean_env: pytest.MonkeyPatch,
) -> None:
    assert config.setting("TEST_KNOB") is None
    assert config.setting("TEST_KNOB", "fallback") == "fallback"
    clean_env.setenv("ZEROPROOF_TEST_KNOB", "legacy")
    assert config.setting("TEST_KNOB") == "legacy"
    clean_env.setenv("WHILEAI_TEST_KNOB", "new")
    assert config.setting("TEST_KNOB") == "new"


def test_an_empty_value_counts_as_unset(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("WHILEAI_TEST_KNOB", "")
    assert config.setting("TEST_KNOB", "d") == "d"
    clean_env.setenv("ZEROPROOF_TEST_KNOB", "legacy")
    assert config.setting("TEST_KNOB") == "legacy", "an empty new name falls through"
    clean_env.setenv("ZEROPROOF_TEST_KNOB", "")
    assert config.flag("TEST_KNOB") is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), ("true", True), (" YES ", True), ("on", True),
     ("0", False), ("false", False), ("no", False), ("2", False)],
)
def test_flag_accepts_the_usual_truthy_words(
    clean_env: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    clean_env.setenv("WHILEAI_TEST_KNOB", value)
    assert config.flag("TEST_KNOB") is expected


def test_home_defaults_to_dot_whileai_in_the_user_home(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("HOME", str(tmp_path))
    assert config.home() == tmp_path / ".whileai"
    assert not (tmp_path / ".whileai").exists(), "home() must not create the folder"


def test_home_follows_whileai_home_then_zeroproof_home_and_expands_the_tilde(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("HOME", str(tmp_path))
    clean_env.setenv("ZEROPROOF_HOME", "~/legacy")
    assert config.home() == tmp_path / "legacy"
    clean_env.setenv("WHILEAI_HOME", str(tmp_path / "custom"))
    assert config.home() == tmp_path / "custom"


def test_the_test_suite_never_points_home_at_the_real_one() -> None:
    assert "whileai-home" in str(config.home())


ERROR_BUILTINS = {
    "SpecError": ValueError, "RowError": ValueError, "ConfigError": ValueError,
    "JudgeError": RuntimeError, "PublishGateError": RuntimeError, "BackendError": RuntimeError,
    "AuthError": PermissionError, "QuotaError": RuntimeError, "SandboxError": RuntimeError,
    "InputError": FileNotFoundError,
}


@pytest.mark.parametrize(("name", "builtin"), sorted(ERROR_BUILTINS.items()))
def test_each_error_is_a_whileai_error_and_the_builtin_callers_catch(
    name: str, builtin: type[Exception]
) -> None:
    cls = getattr(errors, name)
    assert issubclass(cls, errors.WhileaiError)
    assert issubclass(cls, builtin)
    assert getattr(whileai, name) is cls
    with pytest.raises(builtin, match="field `reward`"):
        raise cls("field `reward`: expected a number")


def test_every_error_is_exported_from_the_top_level() -> None:
    assert set(errors.__all__) <= set(whileai.__all__)
    assert set(errors.__all__) == set(ERROR_BUILTINS) | {"WhileaiError", "AgentFailedWarning"}
    assert issubclass(errors.AgentFailedWarning, UserWarning)
