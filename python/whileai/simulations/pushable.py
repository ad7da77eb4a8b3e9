"""``push()`` once: the platform upload that a run (``SimulationData``) and a graded set
(``ScoredData``) share, written as a mixin both classes inherit.

>>> class Rows(Pushable):
...     rows: list = []
>>> callable(Rows().push)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whileai.platform.push import push_run

__all__ = ["Pushable"]


class Pushable:
    """Gives a result object ``push(name, ...)``; the object is what ``push_run`` reads."""

    __slots__ = ()

    def push(
        self, name: str, *, parent: str | None = None, holdout: float | None = None,
        purpose: str | None = None, agent: str | None = None, publish: bool | str = False,
        gate: bool = True, endorsed: Sequence[str] = (), strict_hacks: bool = False,
        description: str | None = None, mode: str | None = None, api_key: str | None = None,
        progress: bool = True, keep_privileged: bool = False,
    ) -> dict[str, Any]:
        """Gate and push the rows to the platform; return the dataset entry.

        A run pushes its exported rows, a graded set its graded rows; either way they go
        through the exit filter (``rows.outbound``) first.

        Args:
            name: the dataset name on the platform.
            parent: the ``ds_`` id this set iterates on (lineage).
            holdout: split off this fraction of tasks and push it as a linked holdout set.
            purpose: what the set is for, recorded on it (``train`` unless given).
            agent: register the agent under this name with the run's tools and system prompt.
            publish: True (or an agent name) publishes the train set.
            gate: run the publish gate first (on by default); a refusal raises
                ``PublishGateError`` with nothing sent.
            endorsed: shortcuts the gate's hack scan treats as intended
                (``"tool:<name>"``, ...).
            strict_hacks: refuse when the hack scan says ``reward_hack`` (else a warning).
            description: a line shown with the set.
            mode: the simulation mode recorded on the set and the gate's shape (the run's own
                mode by default).
            api_key: the platform key (else ``WHILEAI_API_KEY`` or the saved login).
            progress: ``False`` silences the progress lines on stderr.
            keep_privileged: keep the teacher-only ``privileged`` block for a private store
                (such a set can never be published).

        Returns:
            The platform's dataset entry. See ``whileai.platform.push.push_run``.
        """
        return push_run(self, name, parent=parent, holdout=holdout, purpose=purpose, agent=agent,
                        publish=publish, gate=gate, endorsed=endorsed, strict_hacks=strict_hacks,
                        description=description, mode=mode, api_key=api_key,
                        progress=progress, keep_privileged=keep_privileged)
