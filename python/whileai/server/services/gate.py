"""The publish gate's verdict on a stored dataset, as the dataset page shows it.

The core's ``publish_gate`` runs on the dataset's first rows (through the exit filter: a
private store's ``privileged`` block is not handed on), and the answer is remembered per
dataset version: a dataset's rows change only with a new version.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import islice
from typing import Any

from whileai.server.services import Account, Store
from whileai.server.services.profile import dataset_rows

__all__ = ["GATE_ROWS", "gate_facts"]

GATE_ROWS = 2000  # rows the page's gate reads (the push gate, when asked, saw them all)


def gate_facts(store: Store, account: Account, dataset_id: str, *, version: Any,
               mode: str | None) -> dict[str, Any]:
    """``{"refused": reason or "", "facts": [[name, value], ...], "warnings": [...]}``: the
    gate's verdict on the first :data:`GATE_ROWS` rows of version ``version``."""
    return _facts(store, account, dataset_id, version, mode)


@lru_cache(maxsize=256)
def _facts(store: Store, account: Account, dataset_id: str, version: Any,
           mode: str | None) -> dict[str, Any]:
    from whileai.simulations.selection.gate import publish_gate  # numpy-free, but heavy to import

    sample = list(islice(dataset_rows(store, account, dataset_id), GATE_ROWS))
    try:
        report = publish_gate(sample, mode=mode if mode in ("rl", "sft") else "auto",
                              progress=False)
    except Exception as exc:  # a refusal is the gate's answer, shown as such
        return {"refused": str(exc), "facts": [], "warnings": []}
    signal = report.get("signal") or {}
    scan = report.get("hack_scan") or {}
    facts: list[list[Any]] = [
        ["verdict", "passes" if report.get("ok") else "refused"], ["mode", report.get("mode")],
        ["rows checked", report.get("rows")], ["graded", report.get("graded")],
        ["asks with a pass and a fail", signal.get("mixed_asks")],
        ["hack scan", scan.get("regime")]]
    return {"refused": "", "facts": facts, "warnings": [str(w) for w in report["warnings"]]}
