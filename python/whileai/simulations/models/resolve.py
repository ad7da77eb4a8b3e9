"""Pick the model spec for each role: the call's keyword, then ``whileai.context`` /
``whileai.configure``, then ``WHILEAI_AGENT`` / ``WHILEAI_SIMULATOR`` / ``WHILEAI_JUDGE``.

This layer only chooses the spec. The stages turn it into a ready object:
``generate.resolve.resolve_agent`` / ``resolve_writer`` and ``judge.llm_judge.resolve_judge``
(each returns ``None`` when no model is configured for the role; ``False`` also means "no model").

>>> resolve_spec("judge", "ollama:phi4").model
'phi4'
>>> resolve_spec("agent", False) is None
True
"""

from __future__ import annotations

from whileai.config import setting
from whileai.context import configured
from whileai.errors import ConfigError
from whileai.simulations.models.spec import ModelSpec, parse_spec

__all__ = ["ENV_VARS", "resolve_spec"]

ENV_VARS = {"agent": "AGENT", "simulator": "SIMULATOR", "writer": "SIMULATOR", "judge": "JUDGE"}


def resolve_spec(role: str, value: object = None) -> ModelSpec | None:
    """The spec for ``role`` (``agent``, ``simulator``/``writer``, ``judge``), or None.

    Raises:
        ConfigError: the winning value is malformed; the message says where it came from.
    """
    if role not in ENV_VARS:
        raise ConfigError(f"unknown role {role!r}; use one of {sorted(ENV_VARS)}")
    source = "keyword"
    if value is None:
        value, source = configured(role), "whileai.configure/context"
    if value is None:
        value, source = setting(ENV_VARS[role]), f"WHILEAI_{ENV_VARS[role]}"
    if value is None or value is False:
        return None
    try:
        return parse_spec(value)  # type: ignore[arg-type]  # parse_spec names a wrong type
    except ConfigError as exc:
        raise ConfigError(f"{role} model from {source}: {exc}") from None
