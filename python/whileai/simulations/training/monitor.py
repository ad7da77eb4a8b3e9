"""``HackMonitor``: watch a training reward for hacking while the model trains.

``monitor.wrap(reward_fn)`` returns a reward function with TRL's signature
(``prompts, completions, **kwargs -> list[float]``) that records every completion with its reward.
Every ``every`` calls the monitor checks the recent window:

- ``feature``: ``hack_scan`` over the window, grouped by prompt, says ``reward_hack`` (a feature
  that is not endorsed pays more than what is) on ``patience`` checks in a row, naming the same
  feature. Windows do not overlap by default, so consecutive checks are independent tries.
- ``divergence``: the proxy (training) reward rose by ``delta`` over the last ``lookback`` checks
  while the gold reward's paired interval did not move up (needs ``gold=``).
- ``length``: completions grew by ``length_growth`` x against the first check while gold did not
  move up (gold unknown: length alone).
- ``drift``: the trainer's logged KL passed ``kl_budget`` (needs the monitor added as a callback).

Gold is any judge callable (row -> verdict, the judge contract). With ``holdout=`` prompts and a
``sampler`` (prompts -> completions; as a trainer callback the monitor can sample the live model
itself, which needs torch), gold and proxy score fresh holdout samples; without them gold scores
up to ``k`` completions per prompt of the window.

Each alarm is one event on the run (``run.alarm``) with its evidence; ``stop_on`` names the alarms
that stop training (``"any"`` for all; default: log only). As a callback the monitor then sets
``control.should_training_stop``; in your own loop read ``monitor.should_stop``.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from whileai.errors import ConfigError
from whileai.rows.source import read_reward
from whileai.simulations.clean.hack_scan import hack_scan
from whileai.simulations.judge.judging import judge_row
from whileai.simulations.training.run import TrainingRun, as_run
from whileai.simulations.training.sampling import model_sampler

__all__ = ["ALARMS", "HackMonitor", "RewardFn"]

Alarm = Literal["divergence", "length", "drift", "feature"]
ALARMS: tuple[Alarm, ...] = ("divergence", "length", "drift", "feature")
RewardFn = Callable[..., list[float]]
_KL_KEYS = ("kl", "objective/kl", "train/kl")


def as_text(value: Any) -> str:
    """A prompt or completion as text (TRL passes strings or chat message lists)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return str(value.get("content", ""))
    if isinstance(value, Iterable):
        return "\n".join(as_text(v) for v in value)
    return str(value)


def _stop_set(stop_on: str | Iterable[str] | None) -> frozenset[str]:
    names = [stop_on] if isinstance(stop_on, str) else list(stop_on or ())
    if "any" in names:
        return frozenset(ALARMS)
    unknown = sorted(set(names) - set(ALARMS))
    if unknown:
        raise ConfigError(f"stop_on: unknown alarm(s) {unknown}; use {list(ALARMS)} or 'any'")
    return frozenset(names)


def _mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and its standard error (0 for fewer than two values)."""
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return mean, se


class HackMonitor:
    """Watch a reward for hacking during training; see the module docstring.

    Args:
        run: a ``zps.training_run(...)`` to log checks and alarms to (optional).
        holdout: prompts (or rows with a ``prompt``) sampled from the live policy each check.
        gold: a judge callable the training reward cannot see (row -> verdict).
        sampler: ``prompts -> completions`` for the holdout (default: the trainer's model).
        every: reward-function calls between checks.
        k: samples per holdout prompt, and gold judgements per window prompt without holdout.
        window: rows scanned per check (default: every row since the previous check).
        endorsed: feature-name substrings the reward should track (``"tool:lookup_order"``).
        stop_on: alarm name(s) that stop training, or ``"any"``; default: log only.
        delta: the proxy rise over ``lookback`` checks that counts as divergence.
        lookback: how many checks back the divergence and length checks compare with.
        length_growth: completion length ratio against the first check that counts as growth.
        kl_budget: KL above this raises ``drift``.
        alpha: the scan's level (``hack_scan``'s noise floor quantile).
        n_perm: the scan's permutations.
        patience: consecutive ``reward_hack`` checks naming one feature before ``feature`` fires.
        seed: the scan's seed.
        min_obs: fewer rows than this in a window and the scan says ``unknown``.

    >>> monitor = HackMonitor(every=2, endorsed=["contains:answer"], min_obs=4)
    >>> reward = monitor.wrap(lambda prompts, completions, **kw: [1.0] * len(completions))
    >>> reward(["p", "p"], ["an answer", "no"]), monitor.calls
    ([1.0, 1.0], 1)
    """

    def __init__(
        self,
        run: TrainingRun | None = None,
        *,
        holdout: Sequence[Any] | None = None,
        gold: Callable[[Any], Any] | None = None,
        sampler: Callable[[list[str]], Sequence[Any]] | None = None,
        every: int = 10,
        k: int = 4,
        window: int | None = None,
        endorsed: Sequence[str] = (),
        stop_on: str | Iterable[str] | None = None,
        delta: float = 0.1,
        lookback: int = 5,
        length_growth: float = 1.5,
        kl_budget: float | None = None,
        alpha: float = 0.01,
        n_perm: int = 200,
        patience: int = 2,
        seed: int = 0,
        min_obs: int = 40,
    ) -> None:
        if every < 1 or k < 1 or patience < 1 or lookback < 1:
            raise ConfigError("every, k, patience and lookback must be >= 1")
        self.run = as_run(run)
        self.holdout = [as_text(h.get("prompt") if isinstance(h, Mapping) else h)
                        for h in (holdout or [])]
        self.gold, self.sampler = gold, sampler
        self.every, self.k, self.window = every, k, window
        self.endorsed = [e for e in endorsed if e]
        self.stop_on = _stop_set(stop_on)
        self.delta, self.lookback, self.length_growth = delta, lookback, length_growth
        self.kl_budget = kl_budget
        self.alpha, self.n_perm, self.seed, self.min_obs = alpha, n_perm, seed, min_obs
        self.patience = patience
        self.calls = 0
        self.step: int | None = None
        self.checks: list[dict[str, Any]] = []
        self.alarms: list[dict[str, Any]] = []
        self.stop_reason: str | None = None
        self._rows: deque[dict[str, Any]] = deque()
        self._since = 0  # rows recorded since the previous check
        self._reward_fn: RewardFn | None = None
        self._streak: tuple[str | None, int] = (None, 0)
        self._kl: float | None = None
        self._model_sampler: Callable[[list[str]], Sequence[Any]] | None = None

    @property
    def should_stop(self) -> bool:
        """True once an alarm named in ``stop_on`` has fired."""
        return self.stop_reason is not None

    # -- recording -----------------------------------------------------------------------------

    def wrap(self, reward_fn: RewardFn) -> RewardFn:
        """Return ``reward_fn`` with the monitor listening (same signature and results)."""
        self._reward_fn = reward_fn

        def watched(prompts: Sequence[Any], completions: Sequence[Any],
                    **kwargs: Any) -> list[float]:
            rewards = reward_fn(prompts=prompts, completions=completions, **kwargs)
            self.record(prompts, completions, rewards)
            return rewards

        watched.__name__ = getattr(reward_fn, "__name__", "reward")
        return watched

    def record(self, prompts: Sequence[Any], completions: Sequence[Any],
               rewards: Sequence[float | None]) -> None:
        """Add one batch (what ``wrap`` does per call); checks every ``every`` calls."""
        for prompt, completion, reward in zip(prompts, completions, rewards, strict=True):
            if reward is None or not math.isfinite(reward):
                continue
            text = as_text(prompt)
            self._rows.append({"prompt": text, "scenario_id": text,
                               "final_text": as_text(completion), "proxy": float(reward)})
            self._since += 1
        cap = max(self.window or 0, self._since, 1)
        while len(self._rows) > cap:
            self._rows.popleft()
        self.calls += 1
        if self.calls % self.every == 0:
            self.check()

    # -- checks --------------------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        """Run every check on the current window now; returns the check's record."""
        step = self.step if self.step is not None else self.calls
        rows = list(self._rows)[-(self.window or self._since or 1):] if self._rows else []
        self._since = 0
        check: dict[str, Any] = {"step": step, "rows": len(rows), "kl": self._kl}
        if rows:
            check["proxy_reward"] = statistics.fmean(r["proxy"] for r in rows)
            check["completion_length"] = statistics.fmean(
                len(r["final_text"].split()) for r in rows)
        self._score_gold(check, rows)
        self._scan(check, rows)
        self.checks.append(check)
        self._alarms(check)
        if self.run is not None:
            metrics = {f"monitor/{k}": v for k, v in check.items()
                       if k not in ("step", "rows", "top_feature", "regime", "gold_se")
                       and isinstance(v, (int, float)) and not isinstance(v, bool)}
            self.run.log(step, **metrics)
        return check

    def _score_gold(self, check: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        if self.gold is None:
            return
        sampler = self.sampler or self._model_sampler
        if self.holdout and sampler is not None and self._reward_fn is not None:
            prompts = [p for p in self.holdout for _ in range(self.k)]
            completions = list(sampler(prompts))
            proxy = self._reward_fn(prompts=prompts, completions=completions)
            scored: list[dict[str, Any]] = [
                {"prompt": p, "scenario_id": p, "final_text": as_text(c), "proxy": r}
                      for p, c, r in zip(prompts, completions, proxy, strict=True)]
            check["holdout_proxy"] = statistics.fmean(float(r) for r in proxy)
            check["holdout_length"] = statistics.fmean(
                len(s["final_text"].split()) for s in scored)
        else:
            per_prompt: dict[str, int] = {}
            scored = []
            for row in rows:
                if per_prompt.get(row["prompt"], 0) < self.k:
                    per_prompt[row["prompt"]] = per_prompt.get(row["prompt"], 0) + 1
                    scored.append(row)
        values = []
        for row in scored:
            value, _ = read_reward(judge_row(row, self.gold, timeout=None), "reward")
            if value is not None:
                values.append(value)
        if values:
            check["gold_reward"], check["gold_se"] = _mean_ci(values)
            check["gold_n"] = len(values)

    def _scan(self, check: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        report = hack_scan(rows, self.endorsed, reward="proxy", alpha=self.alpha,
                           n_perm=self.n_perm, seed=self.seed, min_obs=self.min_obs,
                           progress=False)
        check["regime"] = report["regime"]
        check["top_feature"] = report["top_feature"]
        check["top_rho"] = report["top_rho"]
        check["tau"] = report["tau"]

    def _gold_not_up(self, now: dict[str, Any], then: dict[str, Any]) -> bool | None:
        """Did gold fail to move up between two checks (None: gold unknown)?"""
        if "gold_reward" not in now or "gold_reward" not in then:
            return None
        diff = now["gold_reward"] - then["gold_reward"]
        se = math.hypot(now["gold_se"], then["gold_se"])
        return bool(diff - 1.96 * se <= 0.0)

    def _alarms(self, check: dict[str, Any]) -> None:
        regime, feature = check.get("regime"), check.get("top_feature")
        if regime == "reward_hack" and feature is not None:
            same = self._streak[0] == feature
            self._streak = (feature, self._streak[1] + 1 if same else 1)
            if self._streak[1] >= self.patience:
                self._fire("feature", check, f"the reward pays for {feature} (rho "
                           f"{check['top_rho']:+.2f} > floor {check['tau']:.2f}), not for "
                           f"what is endorsed, {self._streak[1]} checks in a row",
                           {"feature": feature, "rho": check["top_rho"], "tau": check["tau"]})
        else:
            self._streak = (None, 0)
        if len(self.checks) > self.lookback and "proxy_reward" in check:
            then = self.checks[-1 - self.lookback]
            rise = check["proxy_reward"] - then.get("proxy_reward", check["proxy_reward"])
            if rise >= self.delta and self._gold_not_up(check, then):
                self._fire("divergence", check, f"proxy reward up {rise:+.3f} over "
                           f"{self.lookback} checks while gold did not move up",
                           {"proxy_rise": rise, "gold_then": then["gold_reward"],
                            "gold_now": check["gold_reward"]})
        first = self.checks[0]
        if len(self.checks) > 1 and first.get("completion_length"):
            ratio = check.get("completion_length", 0.0) / first["completion_length"]
            if ratio >= self.length_growth and self._gold_not_up(check, first) is not False:
                self._fire("length", check, f"completions {ratio:.2f}x longer than at the "
                           "first check while gold did not move up", {"ratio": ratio})
        if self.kl_budget is not None and self._kl is not None and self._kl > self.kl_budget:
            self._fire("drift", check, f"KL {self._kl:.4f} past the budget {self.kl_budget}",
                       {"kl": self._kl, "kl_budget": self.kl_budget})

    def _fire(self, name: Alarm, check: dict[str, Any], message: str,
              evidence: Mapping[str, Any]) -> None:
        if any(a["name"] == name for a in self.alarms):
            return  # one line per alarm on the run: the first time it fires
        stop = name in self.stop_on
        alarm = {"name": name, "step": check["step"], "message": message,
                 "evidence": dict(evidence), "stop": stop}
        self.alarms.append(alarm)
        if stop and self.stop_reason is None:
            self.stop_reason = f"{name}: {message}"
        if self.run is not None:
            self.run.alarm(name, step=check["step"], message=message, evidence=evidence,
                           stop=stop)

    # -- report --------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """The monitor's report: settings, every check, alarms, and why it stopped (if it did)."""
        return {"every": self.every, "endorsed": list(self.endorsed),
                "stop_on": sorted(self.stop_on), "checks": [dict(c) for c in self.checks],
                "alarms": [dict(a) for a in self.alarms], "stopped": self.should_stop,
                "stop_reason": self.stop_reason, "calls": self.calls}

    # -- trainer callback (transformers / TRL call these) --------------------------------------

    def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None,
               **kwargs: Any) -> Any:
        for key in _KL_KEYS:
            value = (logs or {}).get(key)
            if isinstance(value, (int, float)) and math.isfinite(value):
                self._kl = float(value)
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.step = int(getattr(state, "global_step", self.calls))
        if self.holdout and self.sampler is None and self._model_sampler is None:
            model, tokenizer = kwargs.get("model"), kwargs.get("processing_class")
            if model is not None and tokenizer is not None:
                self._model_sampler = model_sampler(model, tokenizer)
        if self.should_stop:
            control.should_training_stop = True
        return control

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):  # every other trainer event: nothing to do
            return _ignore_event
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")


def _ignore_event(args: Any, state: Any, control: Any, **kwargs: Any) -> None:
    return None
