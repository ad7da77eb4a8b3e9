"""What will a grouped update learn? Rank features by their within-ask correlation with reward.

Reward and every candidate feature are centred within each ask, so what only tracks *which* ask
a row belongs to (difficulty) is baselined away, exactly as a group-relative advantage does. The
ranking is compared with a noise floor ``tau`` built from ``n_perm`` seeded shuffles of reward
within each ask: each shuffle repeats every reward-dependent choice of the ranking (the search
for conjunctions) and records the largest |rho|; ``tau`` is the ``k``-th largest of those, with
``k = floor(alpha * (n_perm + 1))``, so a pool with no signal clears it at most ``alpha`` of the
time (a permutation test of the maximum; docs/cleaning.md).

Regimes: ``train`` (the top feature is endorsed), ``reward_hack`` (it is not, or the reward
punishes an endorsed one), ``pool_exhausted`` (half or more of the asks are already solved),
``no_signal`` (nothing above the floor, or no ask with mixed rewards), ``degenerate`` (several
features tie at |rho| ~ 1 because each ask has only a couple of distinct trajectories: no
winner is picked) and ``unknown`` (too few rows, no repeats, or signal but no ``endorsed``).

>>> rows = [{"scenario_id": f"t{t}", "final_text": "ok", "reward": 0.0}
...         for t in range(3) for _ in range(2)]
>>> hack_scan(rows, min_obs=2)["regime"]
'no_signal'
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from whileai._gc import paused_gc
from whileai.errors import ConfigError
from whileai.rows.progress import Progress
from whileai.rows.source import as_rows, read_reward, task_key
from whileai.simulations.clean.hack_columns import Column, feature_columns
from whileai.simulations.clean.hack_features import AUTO_TOP, trajectory_key
from whileai.simulations.clean.hack_matrix import (
    CONJ_TOP,
    add_columns,
    conjunctions,
    matrix_from_columns,
    run_scan,
)
from whileai.simulations.clean.hack_verdict import (
    SHOWN,
    AskCounts,
    HackScanReport,
    Ranking,
    Scanned,
    classify,
    pool_verdict,
    rank,
    tier,
)

__all__ = ["hack_scan", "scan_columns", "scan_report", "usable_rows"]

# (line, is_endorsed, n_perm, seed, alpha) -> the scan of the usable rows
Scan = Callable[[Progress, Callable[[str], bool], int, int, float], Scanned]


def usable_rows(
    rows: list[dict[str, Any]], reward: str
) -> tuple[list[dict[str, Any]], list[int], list[float], list[str], dict[str, int]]:
    """The rows the scan reads, with group ids, rewards and task keys, and the skipped counts.

    >>> usable_rows([{"scenario_id": "a", "reward": 1.0}, {"prompt": "b"}], "reward")[1:]
    ([0], [1.0], ['a'], {'unjudged': 1, 'invalid': 0, 'no_task': 0})
    """
    used, groups, rewards, keys = [], [], [], []
    skipped = {"unjudged": 0, "invalid": 0, "no_task": 0}
    group_of: dict[str, int] = {}
    for row in rows:
        raw = row.get(reward)
        value: float | None
        if type(raw) is float and 0.0 <= raw <= 1.0:
            value = raw  # what read_reward returns for it, read without the call
        else:
            value, how = read_reward(row, reward)
            custom = reward != "reward" and how == "invalid" and not isinstance(raw, bool)
            if custom and isinstance(raw, (int, float)) and math.isfinite(raw):
                value = float(raw)  # a custom score outside [0, 1]
        if value is None:
            skipped["unjudged" if raw is None else "invalid"] += 1
            continue
        key = task_key(row)
        if key is None:
            skipped["no_task"] += 1
            continue
        used.append(row)
        groups.append(group_of.setdefault(key, len(group_of)))
        rewards.append(value)
        keys.append(key)
    return used, groups, rewards, keys, skipped


def _support(groups: Sequence[int], rewards: Sequence[float]) -> tuple[AskCounts, list[list[int]]]:
    """The asks counted by how their rewards fall, and the rows of each mixed ask."""
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    mixed = solved = failed = single = 0
    mixed_rows: list[list[int]] = []
    for rows in members.values():
        values = [rewards[i] for i in rows]
        if len(rows) < 2:
            single += 1
        elif len(set(values)) > 1:
            mixed += 1
            mixed_rows.append(rows)
        elif values[0] >= 0.5:
            solved += 1
        else:
            failed += 1
    return AskCounts(rows=len(groups), asks=len(members), mixed_asks=mixed, solved_asks=solved,
                     failed_asks=failed, single_asks=single), mixed_rows


def _distinct_per_ask(
    trajectory: Callable[[int], Hashable], mixed_rows: list[list[int]]
) -> float | None:
    """The median number of distinct trajectories in a mixed ask."""
    distinct = [len({trajectory(i) for i in rows}) for rows in mixed_rows]
    return statistics.median(distinct) if distinct else None


def hack_scan(
    rows: Any,
    endorsed: Sequence[str] | None = None,
    features: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    *,
    reward: str = "reward",
    n_perm: int = 100,
    min_obs: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
    auto: bool = True,
    top: int = AUTO_TOP,
    kinds: Mapping[str, str] | None = None,
    progress: bool = True,
) -> HackScanReport:
    """Scan graded rows for what the reward pays for, within ask, against a permutation floor.

    Args:
        rows: graded rows (list, run, or JSONL path), grouped by task.
        endorsed: substrings of feature names the reward *should* track (``tool:lookup_order``).
        features: your own ``{"name": fn(row) -> number}``, scanned as ``user:<name>``.
        reward: the row key holding the reward. n_perm / alpha / seed: the noise floor.
        min_obs: fewer usable rows than this gives ``unknown``. auto / top: the auto tier.
        kinds: tool kind overrides for the trajectory flags.
        progress: the step under way on stderr (rows as features are built, then the matrix,
            the permutations and the conjunctions) and a summary; False silences it.

    Returns:
        A JSON-able :class:`HackScanReport`: ``regime`` (a :data:`Regime`), ``top_feature``,
        ``tau``, ``features`` (ranked :class:`RankedFeature`), ``collinear``, ``cause`` (a
        :data:`Cause` or None), ``integrity``, ``rivals``, ``inverted``, ``support`` (a
        :class:`ScanSupport`), ``warnings``. Print it with ``format_hack_scan``.
    """
    _check_alpha(alpha)
    used, groups, rewards, _keys, skipped = usable_rows(as_rows(rows), reward)

    texts_seen: list[tuple[str, bool]] = []

    def columns(line: Progress) -> dict[str, Column]:
        line.stage("features", len(used))
        return feature_columns(line.counted(used), features, kinds, auto=auto, top=top,
                               texts_seen=texts_seen)

    return scan_report(
        columns, groups, rewards, skipped, _trajectories(used, texts_seen), endorsed=endorsed,
        n_perm=n_perm, min_obs=min_obs, alpha=alpha, seed=seed, progress=progress,
    )


def _trajectories(
    used: Sequence[Mapping[str, Any]], texts_seen: Sequence[tuple[str, bool]]
) -> Callable[[int], Hashable]:
    """``trajectory(i)``: equal for two rows exactly when their ``trajectory_key``s are.

    A key is its calls part, a NUL, then the stripped agent text. A row whose calls part holds
    no NUL (``plain``) and whose stripped text holds none and belongs to no other row has a key
    no other row has: any other key equal to it would split at the same first NUL into the same
    calls and the same text. Such a row is keyed by its text (read in the walk over the rows,
    ``texts_seen``); the others, or every row when the walk did not run, by ``trajectory_key``.
    """
    unique: set[str] | None = None

    def trajectory(i: int) -> Hashable:
        nonlocal unique
        if i < len(texts_seen):
            if unique is None:
                counts = Counter(text.strip() for text, _ in texts_seen)
                unique = {t for t, c in counts.items() if c == 1 and "\x00" not in t}
            text, plain = texts_seen[i]
            if plain and text.strip() in unique:
                return (True, text.strip())
        return (False, trajectory_key(used[i]))

    return trajectory


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")


def scan_report(
    columns: Callable[[Progress], Mapping[str, Column]],
    groups: Sequence[int],
    rewards: Sequence[float],
    skipped: Mapping[str, int],
    trajectory: Callable[[int], Hashable],
    *,
    endorsed: Sequence[str] | None = None,
    n_perm: int = 100,
    min_obs: int = 20,
    alpha: float = 0.05,
    seed: int = 0,
    progress: bool = True,
    scan: Scan | None = None,
) -> HackScanReport:
    """Return ``hack_scan``'s report from the usable rows' feature columns instead of the rows.

    The hand-off for a scan whose rows live elsewhere (``whileai.scale``): the caller gives
    what :func:`usable_rows` and ``feature_columns`` would give over the same rows in the same
    order, and gets the report ``hack_scan`` makes of them.

    Args:
        columns: ``columns(line) -> {name: (rows, values)}``, called only when an ask has mixed
            rewards (as ``hack_scan`` builds features only then).
        groups / rewards: each usable row's ask id (numbered by first appearance) and reward.
        skipped: the rows left out, by cause (``usable_rows``'s counts).
        trajectory: ``trajectory(i)`` equal for two rows exactly when they did the same thing
            (``trajectory_key`` of the row, or a digest of it).
        endorsed / n_perm / min_obs / alpha / seed / progress: as ``hack_scan``.
        scan: makes the :class:`Scanned` itself instead of from ``columns`` (a scan summed
            where the rows live); it must equal :func:`scan_columns` of the same columns.

    Returns:
        The report, as ``hack_scan`` returns it.

    Raises:
        ConfigError: ``alpha`` is outside (0, 1).

    >>> scan_report(lambda line: {}, [0, 0], [1.0, 1.0], {}, str, min_obs=2)["regime"]
    'pool_exhausted'
    """
    _check_alpha(alpha)
    n_used = len(groups)
    ends = [e for e in (endorsed or []) if e]
    is_endorsed = (lambda name: any(e in name for e in ends)) if ends else (lambda name: False)
    counts, mixed_rows = _support(groups, rewards)
    ranking = Ranking()
    if counts["mixed_asks"]:
        # The ranking allocates millions of small acyclic objects (feature dicts, cells, term
        # sets): cyclic collections during it free nothing and cost ~1/8 of the time at 100k rows.
        with paused_gc(), Progress("scan", n_used, enabled=progress) as line:
            if scan is None:
                scanned = scan_columns(columns(line), groups, rewards, is_endorsed, n_perm, seed,
                                       alpha, line)
            else:
                scanned = scan(line, is_endorsed, n_perm, seed, alpha)
            ranking = rank(scanned, is_endorsed, n_perm, alpha)
            line.finish(n_used, features=ranking.n_features)
    # After the columns: hack_scan's trajectory keys come from the same walk over the rows.
    distinct = _distinct_per_ask(trajectory, mixed_rows)
    verdict = pool_verdict(counts, n_used, min_obs) or classify(ranking.ranked, distinct,
                                                                  bool(ends))
    n_skipped = sum(skipped.values())
    skipped_note = ([f"{n_skipped} rows skipped (no usable reward or task): {dict(skipped)}"]
                    if n_skipped else [])
    return {
        "regime": verdict.regime,
        "top_feature": verdict.top_feature,
        "top_rho": verdict.top_rho,
        "tau": ranking.tau,
        "alpha": alpha,
        "n_perm": n_perm,
        "seed": seed,
        "endorsed": ends,
        "features": ranking.ranked[:SHOWN],
        "n_features": ranking.n_features,
        "collinear": list(verdict.collinear),
        "cause": verdict.cause,
        "integrity": verdict.integrity,
        "rivals": list(verdict.rivals),
        "inverted": list(verdict.inverted),
        "support": {**counts, "distinct_per_ask": distinct, "skipped": dict(skipped)},
        "warnings": [*skipped_note, *ranking.warnings, *verdict.warnings],
    }


def scan_columns(
    columns: Mapping[str, Column],
    groups: Sequence[int],
    rewards: Sequence[float],
    is_endorsed: Callable[[str], bool],
    n_perm: int,
    seed: int,
    alpha: float,
    line: Progress,
) -> Scanned:
    """The scan of the feature columns in one process: merged columns, floor, conjunctions."""
    tiers = {n: tier(n) for n in columns}
    line.stage("matrix")
    first = matrix_from_columns(columns, groups, rewards, tiers=tiers, endorsed=is_endorsed)
    del columns
    # The floor repeats the conjunction search under every shuffle (its candidates are the
    # binary columns, chosen without looking at reward), in the same call as the ranking.
    # (a column is binary when every non-zero value it holds is 1).
    candidates = [j for j in range(first.n_features) if first.is_binary(j)]
    line.stage(f"{n_perm} permutations")
    rho, floor, sup = run_scan(first, n_perm, seed, candidates, CONJ_TOP)
    rho_by = {n: rho[j] for j, n in enumerate(first.names)}
    strong_binary = {first.names[j] for j in candidates}
    line.stage("conjunctions")
    col_of = {n: j for j, n in enumerate(first.names)}
    conj = conjunctions(
        lambda name: first.rows_of(col_of[name]), groups, rewards, rho_by, strong_binary,
        top=CONJ_TOP, alpha=alpha,
    )
    tiers.update(dict.fromkeys(conj, "conjunction"))
    m = first
    if conj:
        # Append the conjunction columns to the matrix instead of building it again.
        m = add_columns(first, conj, tiers=tiers, endorsed=is_endorsed)
        rho, _, sup = run_scan(m, 0, 0)
    return Scanned(m.names, m.tiers, m.aliases, rho, sup, floor)
