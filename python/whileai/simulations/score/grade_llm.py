"""``warm_judge`` at its documented path (the implementation is ``judge/warm.py``).

>>> from whileai.simulations.score.grade_llm import warm_judge
>>> warm_judge.__module__
'whileai.simulations.judge.warm'
"""

from __future__ import annotations

from whileai.simulations.judge.warm import warm_judge

__all__ = ["warm_judge"]
