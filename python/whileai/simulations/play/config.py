"""Knob resolution for ``simulate``: aliases, mode defaults, ``advanced`` keys, validation.

>>> cfg = resolve_config({"mode": "rl", "repeats": 4, "budget": 40})
>>> (cfg.mode, cfg.phrasings, cfg.repeats, cfg.budget, cfg.repeat_policy)
('rl', 1, 4, 40, 'adaptive')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypedDict, get_args

from whileai.errors import ConfigError
from whileai.simulations.models.embedders import HASH_VERSION, resolve_embedder

__all__ = ["ADVANCED_DEFAULTS", "ALIASES", "ALIAS_TABLE", "MODES", "Advanced", "Mode",
           "RepeatPolicy", "RunConfig", "Until", "fold_aliases", "resolve_config"]

Mode = Literal["explore", "sft", "rl", "adaptive"]
Until = Literal["compute", "saturation"]
RepeatPolicy = Literal["adaptive", "fixed"]
MODES: tuple[str, ...] = get_args(Mode)
UNTIL: tuple[str, ...] = get_args(Until)
REPEAT_POLICIES: tuple[str, ...] = get_args(RepeatPolicy)


class Advanced(TypedDict, total=False):
    """``simulate(advanced={...})``: the rarely changed knobs (defaults in ``ADVANCED_DEFAULTS``).

    Attributes:
        concurrency: parallel rollouts (32).
        stop_grace: seconds to wait for running rollouts and writer waves after a stop (5).
        embedder: the prompt-selection embedder, ``"hash"`` or ``"hash-v2:<dim>"``.
        seed: the seed of every draw (0): bit-for-bit at ``concurrency: 1`` or with
            ``reproducible=True``.
        avg_turns: target conversation length in turns (12).
        probe: with ``repeat_policy="adaptive"``, rollouts per situation before deciding
            whether to fill it to k (2).
    """

    concurrency: int
    stop_grace: float
    embedder: str
    seed: int
    avg_turns: int
    probe: int


# The one table of simulate()'s aliases: (alias, canonical keyword, why the alias exists).
# simulate()'s docstring and docs/simulate.md show it; resolve_config folds every alias here.
ALIAS_TABLE: tuple[tuple[str, str, str], ...] = (
    ("policy", "system_prompt", "the system prompt is the agent's policy"),
    ("phrasings", "requests_per_situation", "n: phrasings of each situation"),
    ("n", "requests_per_situation", "the short name of the shape's n"),
    ("repeats", "rollouts_per_request", "k: rollouts of each phrasing"),
    ("unique", "unique_situations", "the short name"),
    ("risk", "fault_rate", "the share of tool calls that fail"),
)
# alias -> canonical simulate() keyword (read-only)
ALIASES: Mapping[str, str] = MappingProxyType({old: new for old, new, _ in ALIAS_TABLE})
ADVANCED_DEFAULTS: dict[str, Any] = {
    "concurrency": 32,
    "stop_grace": 5.0,
    "embedder": "hash",
    "seed": 0,
    "avg_turns": 12,
    "probe": 2,
}
# (phrasings n, repeats k, unique situations) per mode.
_MODE_SHAPE = {"explore": (1, 1, True), "sft": (3, 1, True), "rl": (1, 8, True),
               "adaptive": (2, 2, True)}


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    """Every resolved knob of one run."""

    mode: str = "explore"
    phrasings: int = 1
    repeats: int = 1
    repeats_given: bool = False
    unique: bool = True
    budget: int = 1000
    situations: int | None = None
    time_budget: float | None = None
    until: str = "compute"
    fault_rate: float = 0.5
    repeat_policy: str = "fixed"
    reproducible: bool = False
    logprobs: bool | str = False
    progress: bool = True
    concurrency: int = 32
    concurrency_given: bool = False
    stop_grace: float = 5.0
    embedder: str = "hash"
    embed_dim: int = 256
    seed: int = 0
    avg_turns: int = 12
    probe: int = 2

    @property
    def lost_limit(self) -> int:
        """Lost rollouts after which a run whose agent never succeeds is called off."""
        return max(16, 2 * self.budget)


def _positive_int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def fold_aliases(knobs: Mapping[str, Any]) -> dict[str, Any]:
    """``knobs`` with every alias of :data:`ALIAS_TABLE` folded into its canonical name; None
    means not given, and an alias that disagrees with its name is an error.

    >>> fold_aliases({"repeats": 4, "rollouts_per_request": None, "risk": 0.2})
    {'rollouts_per_request': 4, 'fault_rate': 0.2}

    Raises:
        ConfigError: an alias and its canonical name are both given and differ.
    """
    out: dict[str, Any] = {}
    for key, value in knobs.items():
        name = ALIASES.get(key, key)
        if name in out and value is not None and out[name] is not None and out[name] != value:
            raise ConfigError(f"{key}= and {name}= disagree ({value!r} vs {out[name]!r}); pass one")
        if value is not None or name not in out:
            out[name] = value
    return out


def _embed_dim(spec: object) -> int:
    """Selection needs exact integer counts, so only the hash embedder family is accepted."""

    embedder = resolve_embedder(spec)
    dim = getattr(embedder, "dim", None)
    if not hasattr(embedder, "counts") or not isinstance(dim, int):
        raise ConfigError(
            f"advanced['embedder'] = {spec!r}: prompt selection needs the hash embedder's "
            f"integer counts; use 'hash' or '{HASH_VERSION}:<dim>'"
        )
    return dim


def resolve_config(knobs: Mapping[str, Any]) -> RunConfig:
    """Resolve ``simulate`` keywords into a :class:`RunConfig`.

    Raises:
        TypeError: an unknown ``advanced`` key (the message lists the valid ones); unknown
            keywords are caught by ``simulate``'s signature.
        ConfigError: a value out of range (budget 0, fault_rate 2, unknown mode...) or an
            alias that disagrees with its canonical name.
    """
    k = fold_aliases(knobs)
    mode = k.get("mode") or "explore"
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    n_default, k_default, unique_default = _MODE_SHAPE[mode]
    advanced = dict(k.get("advanced") or {})
    bad = sorted(set(advanced) - set(ADVANCED_DEFAULTS))
    if bad:
        raise TypeError(
            f"advanced got unexpected key(s) {', '.join(bad)}; valid keys: "
            f"{', '.join(ADVANCED_DEFAULTS)}"
        )
    adv = {**ADVANCED_DEFAULTS, **advanced}
    phrasings = k.get("requests_per_situation")
    repeats = k.get("rollouts_per_request")
    budget = k.get("budget")
    budget = 1000 if budget is None else _positive_int("budget", budget)
    situations = k.get("situations")
    if situations is not None:
        situations = _positive_int("situations", situations)
    time_budget = k.get("time_budget")
    if time_budget is not None:
        if isinstance(time_budget, bool) or not isinstance(time_budget, int | float) or (
            not math.isfinite(time_budget) or time_budget < 0
        ):
            raise ConfigError(f"time_budget must be seconds >= 0 or None, got {time_budget!r}")
        time_budget = float(time_budget) or None
    until = k.get("until") or "compute"
    if until not in UNTIL:
        raise ConfigError(f"until must be one of {', '.join(UNTIL)}; got {until!r}")
    fault_rate = k.get("fault_rate")
    fault_rate = 0.5 if fault_rate is None else fault_rate
    if isinstance(fault_rate, bool) or not isinstance(fault_rate, int | float) or not (
        0.0 <= fault_rate <= 1.0
    ):
        raise ConfigError(f"fault_rate must be a number between 0 and 1, got {fault_rate!r}")
    policy = k.get("repeat_policy") or ("adaptive" if mode == "rl" else "fixed")
    if policy not in REPEAT_POLICIES:
        raise ConfigError(
            f"repeat_policy must be one of {', '.join(REPEAT_POLICIES)}; got {policy!r}"
        )
    reproducible = bool(k.get("reproducible"))
    if reproducible and time_budget:
        raise ConfigError(
            "reproducible=True needs the clock off: drop time_budget= (or set it to None)"
        )
    unique = k.get("unique_situations")
    seed = adv["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"advanced['seed'] must be an int, got {type(seed).__name__}")
    stop_grace = adv["stop_grace"]
    if isinstance(stop_grace, bool) or not isinstance(stop_grace, int | float) or stop_grace < 0:
        raise ConfigError(f"advanced['stop_grace'] must be seconds >= 0, got {stop_grace!r}")
    embed_dim = _embed_dim(adv["embedder"])
    return RunConfig(
        mode=mode,
        phrasings=n_default if phrasings is None else _positive_int("phrasings", phrasings),
        repeats=k_default if repeats is None else _positive_int("repeats", repeats),
        repeats_given=repeats is not None,
        unique=unique_default if unique is None else bool(unique),
        budget=budget,
        situations=situations,
        time_budget=time_budget,
        until=until,
        fault_rate=float(fault_rate),
        repeat_policy=policy,
        reproducible=reproducible,
        logprobs=k.get("logprobs") or False,
        progress=k.get("progress") is not False,
        concurrency=_positive_int("advanced['concurrency']", adv["concurrency"]),
        concurrency_given="concurrency" in advanced,
        stop_grace=float(stop_grace),
        embedder=str(adv["embedder"]),
        embed_dim=embed_dim,
        seed=seed,
        avg_turns=_positive_int("advanced['avg_turns']", adv["avg_turns"]),
        probe=_positive_int("advanced['probe']", adv["probe"]),
    )
