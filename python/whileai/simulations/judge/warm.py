"""Wake a model judge before it is timed: ``warm_judge`` sends one tiny request until it answers.

A hosted or freshly started judge can take minutes to load (a cold start). Graded straight away,
those minutes land on the first rows as timeouts. ``warm_judge()`` asks the judge a one-token
question, again and again until it answers or ``timeout`` passes, and reports how long it took.
The public path is ``whileai.simulations.judge.warm.warm_judge`` (not re-exported on ``zps``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from whileai.errors import AuthError, BackendError, ConfigError, JudgeError, QuotaError
from whileai.simulations.judge.llm_judge import LLMJudge, resolve_judge
from whileai.simulations.models.client import RetryPolicy
from whileai.simulations.models.unconfigured import no_model_message

__all__ = ["warm_judge"]

_PING = [{"role": "user", "content": "Reply with the single word: ready"}]


def warm_judge(
    judge: Any = None,
    *,
    timeout: float = 300.0,
    interval: float = 5.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Ask the judge model a one-token question until it answers; return how long it took.

    Args:
        judge: a judge spec (``"openai:<model>"``, ``"vllm:<model>@<url>"``, ...), an
            ``LLMJudge``, or None for the configured one (``whileai.configure(judge=...)``,
            ``WHILEAI_JUDGE``).
        timeout: seconds to keep trying (a cold start takes two to three minutes).
        interval: seconds between tries.
        sleep, clock: injected for tests.

    Returns:
        ``{"judge", "ready": True, "attempts", "seconds"}``.

    Raises:
        ConfigError: no judge model is configured (the message names the settings).
        AuthError, QuotaError: the endpoint refused the key or is out of quota (no retry).
        JudgeError: the judge did not answer within ``timeout`` (the last error is named).

    >>> warm_judge("vllm:m@http://127.0.0.1:9/v1", timeout=0, sleep=lambda s: None)
    Traceback (most recent call last):
    ...
    whileai.errors.JudgeError: judge m did not answer within 0s (1 tries); last error: ...
    """
    owned = not isinstance(judge, LLMJudge)
    llm = judge if not owned else resolve_judge(
        judge, policy=RetryPolicy(max_retries=0, timeout=max(1.0, min(timeout, 60.0)),
                                  connect_timeout=5.0))
    if llm is None:
        raise ConfigError(f"warm_judge: {no_model_message('judge')}")
    start, attempts, last = clock(), 0, ""
    try:
        while True:
            attempts += 1
            try:
                llm.client.chat(_PING, max_tokens=1, temperature=0.0)
            except (AuthError, QuotaError):
                raise
            except (BackendError, OSError, ValueError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                return {"judge": llm.model, "ready": True, "attempts": attempts,
                        "seconds": round(clock() - start, 3)}
            if clock() - start + interval > timeout:
                raise JudgeError(f"judge {llm.model} did not answer within {timeout:g}s "
                                 f"({attempts} tries); last error: {last[:200]}")
            sleep(interval)
    finally:
        if owned:
            llm.close()
