"""The situations a run plays: grid cells in order, worded, diversity-picked, deduplicated.

Cells are visited round-robin (every cell once, ordinary asks first, then every cell again with
a new visit number), in batches. Each slot gets a few candidate wordings; the diversity kernel
keeps the one farthest from what the run already asked. With ``tasks=`` the source replays a
previous run's situations instead.

>>> from whileai.simulations.agent.spec import agent_spec
>>> from whileai.simulations.generate.grid import build_grid
>>> from whileai.simulations.generate.writer import TemplateWriter
>>> from whileai.simulations.play.config import resolve_config
>>> spec = agent_spec(tools=[{"name": "get_order"}], system_prompt="Help.")
>>> src = SituationSource(spec, build_grid(spec), TemplateWriter(), resolve_config({}))
>>> first = src.next()
>>> first is not None and first.situation.scenario_id.startswith("sc-")
True
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from whileai import _backend
from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.diversity import pick_per_group
from whileai.simulations.generate.drafts import make_draft, to_situation, with_candidate
from whileai.simulations.generate.grid import Cell, Grid
from whileai.simulations.generate.situation import Draft, Situation, Writer
from whileai.simulations.play.config import RunConfig
from whileai.simulations.play.stop import StopReason

__all__ = ["Drawn", "SituationSource"]

BATCH = 32  # slots worded and selected together
CANDIDATES = 2  # wordings per slot the diversity pick chooses from
ANCHORS = 16  # recent asks the next batch is kept away from
SATURATION_VISITS = 5  # every cell visited this often = coverage has plateaued
_DRY_BATCHES = 3  # batches in a row with nothing new = the writer has run dry


@dataclass(frozen=True, slots=True, kw_only=True)
class Drawn:
    """A situation with why it was drawn (``arm``, ``selection_reason``)."""

    situation: Situation
    arm: str
    reason: str


def _rephrase(cell: Cell, grid: Grid, phrasing: int) -> Cell:
    """The same situation asked by another person: rotate tone and persona."""
    if phrasing == 0:
        return cell
    axes = dict(grid.axes)
    values = []
    for axis, value in cell.values:
        options = axes.get(axis, ())
        if axis in ("tone", "persona", "intent" if phrasing % 2 == 0 else "_") and value in options:
            value = options[(options.index(value) + phrasing) % len(options)]
        values.append((axis, value))
    return replace(cell, values=tuple(values))


class SituationSource:
    """Yields situations one at a time, wording and selecting them batch by batch."""

    def __init__(
        self,
        spec: AgentSpec,
        grid: Grid,
        writer: Writer,
        cfg: RunConfig,
        *,
        tasks: Sequence[Situation] | None = None,
        reject: Callable[[str], object] | None = None,
    ) -> None:
        self.spec, self.grid, self.writer, self.cfg = spec, grid, writer, cfg
        self.queue: deque[Drawn] = deque(
            Drawn(situation=s, arm="tasks", reason="tasks") for s in (tasks or ())
        )
        self.replaying = tasks is not None
        self.slot = 0
        self.issued = 0
        self.seen: set[int] = set()
        self.anchors: deque[Sequence[int]] = deque(maxlen=ANCHORS)
        self.visits: dict[str, int] = {}
        self.exhausted: StopReason | None = None
        self.reject = reject
        self.stats = {"candidates": 0, "coverage_fills": 0, "duplicates_skipped": 0,
                      "empty_asks": 0}
        if reject is not None:
            self.stats.update(trace_copies_skipped=0, trace_copies_exact=0, trace_copies_near=0)
        self._verdicts: dict[str, object] = {}  # reject's answers for the batch being picked
        self._dry = 0
        # set by the engine when the run has a clock: the monotonic time (time budget plus
        # stop_grace) past which a writer wave still running is abandoned and counted
        self.deadline: float | None = None
        self.waves_abandoned = 0

    def _write(self, drafts: list[Draft]) -> list[str]:
        """One writer wave; past ``deadline`` it is abandoned (counted) and the source stops."""
        if self.deadline is None:
            return list(self.writer.write(drafts))
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["texts"] = list(self.writer.write(drafts))
            except BaseException as exc:  # re-raised in the engine's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="whileai-writer-wave", daemon=True)
        worker.start()
        worker.join(max(0.0, self.deadline - time.monotonic()))
        if worker.is_alive():
            self.waves_abandoned += 1
            self.exhausted = "time_budget"
            stop = getattr(self.writer, "stop", None)
            if callable(stop):
                with contextlib.suppress(Exception):
                    stop()
            return [""] * len(drafts)
        if "error" in box:
            raise box["error"]
        return list(box["texts"])

    def next(self) -> Drawn | None:
        """The next situation, or None when the source is exhausted (see ``exhausted``)."""
        while not self.queue and self.exhausted is None:
            self._refill()
        if not self.queue:
            return None
        self.issued += 1
        if self.cfg.situations is not None and self.issued >= self.cfg.situations:
            self.exhausted = self.exhausted or "situations_exhausted"
            drawn = self.queue.popleft()
            self.queue.clear()
            return drawn
        return self.queue.popleft()

    def _slots(self) -> list[tuple[Cell, int]]:
        cells = self.grid.cells
        n = len(cells)
        size = BATCH
        if self.cfg.until == "saturation":
            size = min(size, SATURATION_VISITS * n - self.slot)
        out = []
        for _ in range(size):
            visit, index = divmod(self.slot, n)
            out.append((cells[index], visit))
            self.slot += 1
        return out

    def _refill(self) -> None:
        if self.replaying:
            self.exhausted = "tasks_done"
            return
        if not self.grid.cells:
            self.exhausted = "situations_exhausted"
            return
        if self.cfg.until == "saturation" and self.slot >= SATURATION_VISITS * len(self.grid.cells):
            self.exhausted = "saturation"
            return
        slots = self._slots()
        cfg = self.cfg
        drafts: list[Draft] = []
        groups: list[int] = []
        for g, (cell, visit) in enumerate(slots):
            base = make_draft(self.spec, cell, visit=visit, seed=cfg.seed,
                              fault_rate=cfg.fault_rate)
            drafts.append(base)  # candidate 0
            drafts.extend(with_candidate(base, c) for c in range(1, CANDIDATES))
            groups.extend([g] * CANDIDATES)
        texts = self._write(drafts)
        if self.waves_abandoned and self.exhausted == "time_budget":
            return
        self.stats["candidates"] += len(texts)
        many = getattr(self.reject, "many", None)
        if callable(many):  # screen the whole batch for source copies in one pass
            self._verdicts = dict(zip(texts, many(texts), strict=True))
        unit = _backend.hash64(f"batch|{self.slot}")
        chosen, fills, kept = pick_per_group(texts, groups, anchor_counts=list(self.anchors),
                                             seed=(cfg.seed ^ unit) & ((1 << 63) - 1),
                                             dim=cfg.embed_dim)
        self.stats["coverage_fills"] += len(fills)
        fill_set = set(fills)
        added = 0
        for g, pick in enumerate(chosen):
            slot_candidates = range(g * CANDIDATES, (g + 1) * CANDIDATES)
            order = [pick] + [i for i in slot_candidates if i != pick]
            index = next((i for i in order if self._fresh(texts[i])), None)
            if index is None:
                if any(texts[i].strip() for i in order):  # all-empty slots: empty_asks
                    self.stats["duplicates_skipped"] += 1
                continue
            reason = "coverage" if g in fill_set else "farthest"
            if slots[g][0].block == "seed":
                reason = "seed_situation"
            if index == pick:
                self.anchors.append(kept[g])
            added += self._emit(drafts[index], texts[index], reason)
        self._dry = 0 if added else self._dry + 1
        if self._dry >= _DRY_BATCHES:
            self.exhausted = "situations_exhausted"

    def _fresh(self, text: str) -> bool:
        if not text.strip():  # the writer gave nothing to ask: never played, counted
            self.stats["empty_asks"] += 1
            return False
        if self.reject is not None:
            verdict = self._verdicts[text] if text in self._verdicts else self.reject(text)
            if verdict:  # a source trace's ask (exact or near copy): never played, counted
                self.stats["trace_copies_skipped"] += 1
                if verdict in ("exact", "near"):
                    self.stats[f"trace_copies_{verdict}"] += 1
                return False
        if not self.cfg.unique:
            return True
        return _backend.hash64(text) not in self.seen

    def _emit(self, draft: Draft, text: str, reason: str) -> int:

        self.seen.add(_backend.hash64(text))
        self.queue.append(Drawn(situation=to_situation(draft, text), arm="explore", reason=reason))
        for p in range(1, self.cfg.phrasings):
            cell = _rephrase(draft.cell, self.grid, p)
            phr = replace(draft, cell=cell, phrasing=p, candidate=0)
            worded = self._write([phr])[0]
            if self.waves_abandoned and self.exhausted == "time_budget":
                break
            if not self._fresh(worded):
                self.stats["duplicates_skipped"] += bool(worded.strip())
                continue
            self.seen.add(_backend.hash64(worded))
            self.queue.append(
                Drawn(situation=to_situation(phr, worded), arm="phrasing", reason="phrasing")
            )
        return 1
