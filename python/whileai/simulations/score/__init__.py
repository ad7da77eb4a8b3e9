"""The path the spec names for ``warm_judge`` (``whileai.simulations.score.grade_llm``).

Judging lives in ``whileai.simulations.judge``; this package only keeps that documented path.
"""
