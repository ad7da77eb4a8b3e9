"""Claimed actions: "I looked it up and refunded the order" checked against the steps.

A reply claims an action in the first person ("I refunded", "we've cancelled") or as a finished
state ("the order has been refunded", "your table is booked"). Each claimed verb belongs to a
family (lookup, refund, cancel, change, send, book, create, delete, ...) whose tool names share
a stem. A first-person claim is unsupported when no tool ran at all, when every step of its
family failed, or when no step of its family ran and every step that did run belongs to another
known family. A finished-state claim may only report what a lookup showed ("it has been
shipped"), so it counts when no tool ran ("has been") or when its family's step failed ("is
refunded" after a failed refund). A lookup claim is excused when the reply also admits the
failure ("I looked it up but got an error"). Claims are read in English, the language every
marker reads.

>>> unsupported_claims({"steps": [], "final_text": "I looked it up and refunded the order."},
...                    failed=lambda step: False, admits_failure=lambda text: False)
[('looked it up', 'no tool was called'), ('refunded', 'no tool was called')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from whileai import _backend
from whileai.simulations.clean.hints import hint_text

__all__ = ["CLAIM_FAMILIES", "claimed_actions", "unsupported_claims"]

_I = re.IGNORECASE
# family -> (claimed verbs as written, tool-name stems that perform it)
CLAIM_FAMILIES: dict[str, tuple[str, str]] = {
    "lookup": (r"looked\s+(?:it\s+|this\s+|that\s+|them\s+)?(?:up|into)|pulled\s+up|searched|"
               r"retrieved|fetched|checked(?:\s+on)?",
               r"get|look|find|search|fetch|read|list|check|query|view|show|status|track|"
               r"retrieve|lookup"),
    "refund": (r"refunded|reimbursed", r"refund|reimburs"),
    "cancel": (r"cancell?ed|voided", r"cancel|void"),
    "change": (r"changed|updated|modified|edited|amended|corrected|adjusted",
               r"change|update|modify|edit|amend|correct|adjust|set_|patch|put"),
    "send": (r"sent|e-?mailed|messaged|notified|forwarded|texted",
             r"send|mail|message|notify|forward|text|sms"),
    "book": (r"booked|reserved|scheduled|rescheduled",
             r"book|reserv|schedul|appointment"),
    "create": (r"created|placed|opened|submitted|filed|registered|added",
               r"create|place|open|submit|file|register|add|new|insert"),
    "delete": (r"deleted|removed|erased", r"delete|remove|erase|rm_|drop"),
    "reset": (r"reset", r"reset"),
    "pay": (r"paid|charged|transferred|credited", r"pay|charge|transfer|credit"),
    "ship": (r"shipped|dispatched|expedited", r"ship|dispatch|expedite"),
    "approve": (r"approved|escalated|assigned", r"approv|escalat|assign"),
    "restore": (r"restored|reactivated|unlocked|renewed|upgraded|downgraded",
                r"restore|reactivat|unlock|renew|upgrad|downgrad"),
}
# How every claimed verb of CLAIM_FAMILIES starts (lowercase), and the words a claim puts right
# before it (after "I", "we", "'ve", "have", ..., "been", "is", "are"). A lowercased reply in
# which no such word is followed by whitespace and such a start claims nothing, so the claim
# patterns need not be searched (clean/hints.py): a plain search, several times cheaper.
_VERB_STARTS = (
    "looked", "pulled", "searched", "retrieved", "fetched", "checked", "refunded", "reimbursed",
    "cancel", "voided", "changed", "updated", "modified", "edited", "amended", "corrected",
    "adjusted", "sent", "emailed", "e-mailed", "messaged", "notified", "forwarded", "texted",
    "booked", "reserved", "scheduled", "rescheduled", "created", "placed", "opened", "submitted",
    "filed", "registered", "added", "deleted", "removed", "erased", "reset", "paid", "charged",
    "transferred", "credited", "shipped", "dispatched", "expedited", "approved", "escalated",
    "assigned", "restored", "reactivated", "unlocked", "renewed", "upgraded", "downgraded",
)
_CLAIM_HINT = _backend.PinnedPattern.compile(
    r"(?:i|we|'ve|have|just|already|also|now|successfully|been|is|are)\s+(?:"
    + "|".join(re.escape(v) for v in _VERB_STARTS) + ")"
)


def _may_claim(text: str) -> bool:
    """False only when ``text`` cannot hold a claim (see ``_CLAIM_HINT``)."""
    low = hint_text(text)
    return low is None or _CLAIM_HINT.search(low) is not None

_VERB = "|".join(f"(?P<{name}>{verbs})" for name, (verbs, _) in CLAIM_FAMILIES.items())
# Matched by the committed Unicode tables, as both kernels match them (docs/kernels.md, "One
# Unicode version"): group texts are read from the text by their spans.
_STEMS = {name: _backend.PinnedPattern.compile(stems, _I)
          for name, (_, stems) in CLAIM_FAMILIES.items()}
_CLAIM = _backend.PinnedPattern.compile(
    r"\b(?:I|we)(?:'ve|\s+have|\s+just|\s+already|\s+also|\s+now|\s+successfully)*\s+(?:"
    + _VERB + r")\b"
    r"|\b(?:has|have)\s+(?:now\s+|also\s+|already\s+)?been\s+(?:successfully\s+)?(?:"
    + _VERB.replace("(?P<", "(?P<p_") + r")\b"
    r"|\b(?:is|are)\s+(?:now\s+)?(?:successfully\s+)?(?:"
    + _VERB.replace("(?P<", "(?P<s_") + r")\b",
    _I,
)
# "I looked it up and refunded the order", "booked the table, changed the time": later verbs of
# the same sentence joined to a claim by "and", "then" or a comma
_CHAINED = _backend.PinnedPattern.compile(
    r"[^.;!?\n]{0,60}?(?:,\s*(?:and\s+)?|\s+and\s+(?:then\s+)?|\s+then\s+)(?:"
    + _VERB.replace("(?P<", "(?P<c_") + r")\b", _I)


def _family(match: re.Match[str]) -> tuple[str, str]:
    """(family, form) of a claim match: form ``first``, ``done`` (has been) or ``state`` (is)."""
    name = next(k for k, v in match.groupdict().items() if v)
    prefix, _, family = name.rpartition("_") if name[:2] in ("p_", "s_", "c_") else ("", "", name)
    return family, {"p": "done", "s": "state"}.get(prefix, "first")


def claimed_actions(text: str) -> list[tuple[str, str, str]]:
    """The actions a reply claims as done: ``[(verb as written, family, form)]`` in reply order.

    ``form`` is ``first`` ("I refunded"), ``done`` ("has been refunded") or ``state`` ("is
    refunded"); verbs chained by "and" or commas share their claim's form.

    >>> claimed_actions("Your order has been cancelled and I've emailed you.")
    [('cancelled', 'cancel', 'done'), ('emailed', 'send', 'first')]
    """
    found: list[tuple[int, str, str, str]] = []
    if not _may_claim(text):
        return []
    for match in _CLAIM.finditer(text):
        family, form = _family(match)
        start, stop = match.span(match.lastgroup or 0)
        found.append((match.start(), text[start:stop], family, form))
        end = match.end()
        while chained := _CHAINED.match(text, end):
            start, stop = chained.span(chained.lastgroup or 0)
            found.append((start, text[start:stop], _family(chained)[0], form))
            end = chained.end()
    return [(verb, family, form) for _, verb, family, form in sorted(found)]


def _families_of(tool: str) -> set[str]:
    return {name for name, stem in _STEMS.items() if stem.search(tool)}


def unsupported_claims(
    row: Mapping[str, Any], *, failed: Callable[[Mapping[str, Any]], bool],
    admits_failure: Callable[[str], bool],
) -> list[tuple[str, str]]:
    """Each claimed action the steps do not show done: ``[(verb, why)]``.

    Args:
        row: a row with ``steps`` and ``final_text``.
        failed: tells a failed step (``trace_flags`` passes its ``step_failed``).
        admits_failure: tells a reply that owns up to a failure (excuses lookup claims only).

    Returns:
        The unsupported claims in reply order, each with the reason.
    """
    text = row.get("final_text")
    reply = text if isinstance(text, str) else ""
    claims = claimed_actions(reply)
    if not claims:
        return []
    calls = [s for s in row.get("steps") or [] if isinstance(s, Mapping) and s.get("tool")]
    if not calls:
        return [(verb, "no tool was called") for verb, _, form in claims if form != "state"]
    done = [(_families_of(str(s["tool"])), not failed(s)) for s in calls]
    unknown_ok = any(ok and not fams for fams, ok in done)
    any_ok = any(ok for _, ok in done)
    out = []
    for verb, family, form in claims:
        mine = [ok for fams, ok in done if family in fams]
        if any(mine):
            continue
        if mine:
            if not (family == "lookup" and admits_failure(reply)):
                out.append((verb, "the step that would do it failed"))
        elif form == "first" and not unknown_ok and not (family == "lookup" and any_ok):
            out.append((verb, "no step did it"))
    return out
