"""How a person writes: their typing (lower case, typos, a clipped note) and their voice (a
non-native speaker's transfer errors, an elderly person's full forms); literal values (ids,
amounts, names) are never mangled, so an agent can read them back.

Typos follow a realistic mix, one a message (two in a long one, often none in a short one): a
dropped letter, a doubled letter, a neighbouring key, two letters swapped, a missing apostrophe,
or an autocorrected word.

>>> from whileai.simulations.world.values import draws
>>> typed("Please check order #W1234567.", "lowercase", draws(0, 1), ["#W1234567"])
'please check order #W1234567.'
>>> spoken_as("I'd like to cancel the order, I can't wait.", "elderly", draws(0, 1))
'I would like to cancel the order, I cannot wait.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whileai.simulations.world.values import Draw

__all__ = ["spoken_as", "typed"]


def typed(text: str, typing: str, pick: Draw, spans: Sequence[str] = ()) -> str:
    """Apply the typing axis to the words around the literal values (ids, amounts, names)."""
    if typing not in ("lowercase", "typos", "clipped"):
        return text
    keep = sorted({s for s in spans if s and s in text}, key=len, reverse=True)
    if not keep:
        keep_none = _retype(text, typing, pick)
        return re.sub(r"\s+", " ", keep_none).strip() if typing == "clipped" else keep_none
    taken: list[tuple[int, int]] = []  # the literal spans, longest first, never overlapping
    for literal in keep:
        start = text.find(literal)
        while start >= 0:
            end = start + len(literal)
            if all(end <= a or start >= b for a, b in taken):
                taken.append((start, end))
            start = text.find(literal, end)
    out, at = [], 0
    for start, end in sorted(taken):
        out.append(_retype(text[at:start], typing, pick))
        out.append(text[start:end])
        at = end
    out.append(_retype(text[at:], typing, pick))
    joined = "".join(out)
    return re.sub(r"\s+", " ", joined).strip() if typing == "clipped" else joined


def _retype(text: str, typing: str, pick: Draw) -> str:
    if typing == "lowercase":
        return text.lower()
    if typing == "typos":
        return _typos(text, pick)
    return _clipped(text)


_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEAR = {c: "".join(row[j] for j in (i - 1, i + 1) if 0 <= j < len(row))
         for row in _ROWS for i, c in enumerate(row)}
_AUTO = {"there": "their", "your": "you're", "from": "form", "then": "than", "its": "it's",
         "lose": "loose", "were": "where", "know": "now", "order": "odder", "which": "witch",
         "item": "iTem", "account": "accounts", "address": "adress", "received": "recieved",
         "definitely": "definately", "separate": "seperate", "tomorrow": "tommorow"}
_WORD = re.compile(r"[A-Za-z']{3,}")


def _typo(word: str, pick: Draw) -> str:
    low = word.lower()
    if low in _AUTO and pick.below(2) == 0:
        return _AUTO[low]
    if "'" in word:
        return word.replace("'", "")
    kind = pick.below(4)
    i = 1 + pick.below(max(1, len(word) - 2))
    if kind == 0:  # a letter left out
        return word[:i] + word[i + 1:]
    if kind == 1:  # a letter doubled
        return word[:i] + word[i] + word[i:]
    if kind == 2 and word[i].lower() in _NEAR:  # the key next to it
        near = _NEAR[word[i].lower()]
        return word[:i] + near[pick.below(len(near))] + word[i + 1:]
    if i + 1 < len(word) and word[i] != word[i + 1]:  # two letters swapped
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word[:i] + word[i] + word[i:]  # (a swap of two same letters shows nothing)


# words an ask needs to be understood at all: never mistyped
_KEEP = frozenset(("human", "person", "agent", "someone", "staff", "total", "cost", "sum", "add",
                   "times", "minus", "left", "difference", "think", "weigh", "options", "pros",
                   "cons", "torn", "reason"))


def _typos(text: str, pick: Draw) -> str:
    words = [m for m in _WORD.finditer(text) if m.group(0).lower() not in _KEEP]
    if not words or (len(words) < 8 and pick.below(3) != 0):  # a short reply is often clean
        return text
    count = 1 + (1 if len(words) > 30 and pick.below(2) == 0 else 0)
    chosen = sorted({pick.below(len(words)) for _ in range(count)})
    out, at = [], 0
    for n in chosen:
        m = words[n]
        out.append(text[at:m.start()])
        out.append(_typo(m.group(0), pick))
        at = m.end()
    out.append(text[at:])
    return "".join(out)


def _clipped(text: str) -> str:
    """A note typed on the go: lower case, "pls" and "thx", no full stop at the end."""
    out = text.replace("please", "pls").replace("Please", "pls").replace("thanks", "thx")
    out = out.replace("Thanks", "thx").replace("Thank you", "thx").replace("thank you", "thx")
    out = out[:1].lower() + out[1:]
    return out.rstrip(".")


_FULL = (("I'd like", "I would like"), ("I'd", "I would"), ("I'm", "I am"), ("can't", "cannot"),
         ("Can't", "Cannot"), ("don't", "do not"), ("Don't", "Do not"), ("You're", "You are"),
         ("didn't", "did not"), ("it's", "it is"), ("It's", "It is"), ("I've", "I have"),
         ("won't", "will not"), ("What's", "What is"), ("what's", "what is"),
         ("isn't", "is not"), ("I'll", "I will"), ("you're", "you are"), ("doesn't", "does not"))
_TRANSFER = (  # what a learner of English often writes
    (re.compile(r"\bI'd like to (\w+)"), r"I would like \1"),
    (re.compile(r"\bI want to (\w+)"), r"I want \1"),
    (re.compile(r"\bCan you\b"), "Please can you"),
    (re.compile(r"\bcould you\b"), "you can"),
    (re.compile(r"\bthe (order|reservation|account|item|line|bill|plan)\b"), r"\1"),
    (re.compile(r"\ba (\w+)"), r"\1"),
    (re.compile(r"\bI tried\b"), "I have tried"),
    (re.compile(r"\bI need you to\b"), "I need that you"),
    (re.compile(r"\binformation\b"), "informations"),
    (re.compile(r"\bIt's\b"), "Is"),
    (re.compile(r"\bThanks\.?$"), "Thank you for help."),
    (re.compile(r"\bdoesn't\b"), "not"),
)


def spoken_as(text: str, persona: str, pick: Draw) -> str:
    """The person's voice over the words: a non-native speaker makes two or three transfer
    errors, an elderly person writes every word out; everyone else as written."""
    if persona == "elderly":
        for short, full in _FULL:
            text = text.replace(short, full)
        return text
    if persona != "non_native":
        return text
    rules = [r for r in _TRANSFER if r[0].search(text)]
    for _ in range(min(len(rules), 2 + pick.below(2))):
        pattern, repl = rules.pop(pick.below(len(rules)))
        text = pattern.sub(repl, text, count=1)
    return text
