"""``data.push(...)`` / ``scored.push(...)``: gate a run's rows, then push them (and a holdout).

The gate runs on every row before anything is sent, so a refusal stores nothing. With
``holdout=`` the rows are split by task (``split_pseudo_production``) and both sides are
pushed, linked to each other; if the second push fails the first is deleted again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whileai.errors import ConfigError

__all__ = ["push_run"]


def push_run(
    run: Any, name: str, *, parent: str | None = None, holdout: float | None = None,
    purpose: str | None = None, agent: str | None = None, publish: bool | str = False,
    gate: bool = True, endorsed: Sequence[str] = (), strict_hacks: bool = False,
    description: str | None = None, mode: str | None = None, seed: int = 0,
    api_key: str | None = None, base_url: str | None = None, progress: bool = True,
    keep_privileged: bool = False,
) -> dict[str, Any]:
    """Push the rows of a run (``SimulationData`` or ``ScoredData``); return the entry.

    Args:
        run: the run; its exported rows are pushed. name: the dataset name. parent: the
            ``ds_`` id it iterates on. holdout: a fraction of tasks to push as a linked
            ``holdout`` set (``entry["holdout"]``). purpose: ``train`` unless given.
            agent: the agent it belongs to; the run's tools and system prompt (when it has
            them) are attached to the agent's record. publish: ``True`` (under ``agent``) or an
            agent name: publish the train set (``entry["card"]``). gate: run ``publish_gate`` first.
            endorsed / strict_hacks: the gate's hack-scan settings. mode: ``"rl"`` or
            ``"sft"`` gates the rows in that shape, and the mode is recorded (the run's mode by
            default). progress: the gate's scan and each upload on stderr; False
            silences them. keep_privileged: keep the teacher-only ``privileged`` block (a
            private store; refused with ``publish``). Every row goes through the exit filter
            (``rows.outbound``) on the way out.

    Raises:
        PublishGateError: the gate refused (nothing was sent).
        ConfigError: ``holdout`` outside (0, 1), ``publish=True`` without ``agent``, or
            ``publish`` with ``keep_privileged``.
    """
    from whileai.platform.datasets import push_rows
    from whileai.platform.manage import delete_dataset
    from whileai.platform.manage import publish as publish_card

    source = getattr(run, "trajectories" if keep_privileged else "rows", None)
    if source is None:
        source = getattr(run, "rows", run)
    rows = list(source() if callable(source) else source)
    if keep_privileged and publish:
        raise ConfigError("keep_privileged=True keeps the teacher-only block for a private "
                          "store; a published set may not hold it: drop publish= or "
                          "keep_privileged=")
    mode = mode or getattr(run, "mode", None)
    if holdout is not None and not 0.0 < holdout < 1.0:
        raise ConfigError(f"holdout= must be a fraction in (0, 1), got {holdout!r}")
    card_agent = agent if publish is True else (publish or None)
    if publish is True and not agent:
        raise ConfigError("publish=True needs agent= (the card's group), or pass publish='name'")
    report = None
    if gate:
        # local: whileai.simulations imports this package first (a debt in test_house_layers)
        from whileai.simulations.selection.gate import publish_gate
        report = publish_gate(rows, mode=mode if mode in ("rl", "sft") else "auto",
                              endorsed=list(endorsed) or None, strict_hacks=strict_hacks,
                              progress=progress)
    common: dict[str, Any] = {"api_key": api_key, "base_url": base_url, "mode": mode,
                              "agent": agent, "description": description, "progress": progress,
                              "keep_privileged": keep_privileged}
    train = rows
    held: list[dict[str, Any]] = []
    if holdout is not None:
        # local: whileai.simulations imports this package first (a debt in test_house_layers)
        from whileai.simulations.selection.holdout import split_pseudo_production
        held, train = split_pseudo_production(rows, holdout, seed=seed)
    entry = push_rows(train, name, parent=parent, purpose=purpose or "train", **common)
    try:
        if holdout is not None:
            entry["holdout"] = push_rows(held, f"{name}-holdout", purpose="holdout",
                                         linked=entry["datasetId"], **common)
            entry["linkedId"] = entry["holdout"]["datasetId"]
        tools, prompt = getattr(run, "tools", None), getattr(run, "system_prompt", None)
        if agent and (tools or prompt):
            from whileai.platform.agents import register_agent

            register_agent(agent, tools=list(tools) if tools else None,
                           system_prompt=prompt or None, api_key=api_key, base_url=base_url)
        if card_agent:
            entry["card"] = publish_card(entry["datasetId"], str(card_agent),
                                         description=description, api_key=api_key,
                                         base_url=base_url)
    except BaseException:
        delete_dataset(entry["datasetId"], api_key=api_key, base_url=base_url)
        raise
    if report is not None:
        entry["gate"] = report
    return entry
