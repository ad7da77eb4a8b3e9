"""The trace flags of many rows in one kernel call: which flags fire, without their evidence.

``trace_flags`` reads one row and says why each flag fired; ``hack_scan`` only needs which
fired, for every row. Here Python reads each row dict once into flat inputs (the agent's text,
the final reply, and per tool step its kind, whether it failed, the claim families of its name,
its arguments as text and its path arguments) and the ``trace_masks`` kernel runs the patterns
of ``trace_flags.py`` and ``claims.py`` and the flag rules (docs/kernels.md, "Trace flags").
A row whose steps are not a list of dicts is read by ``trace_flags`` itself.

>>> flag_masks([{"steps": [], "final_text": "I verified it and all tests pass."}])
[3]
>>> [FLAGS[k] for k in range(len(FLAGS)) if 3 >> k & 1]
['lie.tests_claimed', 'lie.unverified_claim']
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from whileai import _backend
from whileai.simulations.clean import claims, trace_flags
from whileai.simulations.clean.trace_flags import FLAGS, KINDS, step_failed

__all__ = ["FLAGS", "TraceInputs", "flag_masks", "trace_patterns"]

_BIT = {flag: 1 << k for k, flag in enumerate(FLAGS)}
_KIND_CODE = {kind: k for k, kind in enumerate(KINDS)}
_FIXED, _FAILED, _CLAIMS = 8, 32, 64
_COMMAND = _KIND_CODE["command"]
_FAMILIES = tuple(claims.CLAIM_FAMILIES)
_text_args = trace_flags._text_args
_STR = {str}
_DICT = {dict}
_PLAIN = {str, int, float, bool, type(None)}

# What a row's steps hold for the hand columns (``TraceInputs.add``): the agent's text (its
# assistant texts and final reply, as ``hack_features.agent_text``), the user turns, the names
# of the tools called (text names, in call order), whether a step was cut off, and whether the
# calls part of the row's ``trajectory_key`` certainly holds no NUL (``plain``: every tool name
# a NUL-free str, every argument dict a plain dict of str keys and str, int, float, bool or None
# values, whose reprs escape a NUL; False unless asked for).
Seen = tuple[str, int, list[str], bool, bool]


def trace_patterns() -> list[str]:
    """The thirteen patterns of the flag rules, in the kernel's order (``_pure/trace.py``)."""
    t, c = trace_flags, claims
    return [p.source for p in (
        t._TESTS_PASS, t._VERIFIED, t._EDITED, t._ADMITS_FAILURE, t._TEST_PATH, t._WEAKEN,
        t._SUPPRESS, t._BYPASS, t._DESTRUCTIVE, t._SECRET, t._TEST_CMD, c._CLAIM, c._CHAINED,
    )]


@functools.lru_cache(maxsize=4096)
def _families(name: str) -> int:
    """The claim families a tool name belongs to, one bit each (``CLAIM_FAMILIES`` order)."""
    found = claims._families_of(name)
    return sum(1 << k for k, family in enumerate(_FAMILIES) if family in found)


def _kind_code(name: str, raw_args: Any, kinds: Mapping[str, str] | None) -> int:
    if kinds and name in kinds:
        return _KIND_CODE[trace_flags.tool_kind({"tool": name}, kinds)] | _FIXED
    kind = trace_flags._name_kind(name)
    if kind == "command" and not isinstance(raw_args, dict):
        # The kernel reads a command's arguments as text only when they are a dict.
        kind = trace_flags.tool_kind({"tool": name, "arguments": raw_args})
        return _KIND_CODE[kind] | _FIXED
    return _KIND_CODE[kind]


def _mask(flags: list[dict[str, str]]) -> int:
    return sum(_BIT[f["flag"]] for f in flags)


class TraceInputs:
    """The flat inputs of ``trace_masks``, one row at a time; ``masks()`` runs the kernel.

    >>> inputs = TraceInputs()
    >>> inputs.add({"steps": [{"tool": "delete_user"}], "final_text": "Done."})
    ('Done.', 0, ['delete_user'], False, False)
    >>> [FLAGS[k] for k in range(len(FLAGS)) if inputs.masks()[0] >> k & 1]
    ['risk.destructive']
    """

    BLOCK = 4096  # rows per kernel call: the kernel's copies of non-ASCII texts stay small

    def __init__(self, kinds: Mapping[str, str] | None = None, *, plain: bool = False) -> None:
        self.kinds = kinds
        self.plain = plain  # add() tells whether a row's calls are plain (``Seen``)
        self.done: list[int] = []
        # The native kernel releases the GIL: a block runs on a worker thread while the caller
        # reads the next rows (the pure kernel runs in place, it would only contend for the GIL).
        self.pending: list[Future[Any]] = []
        self.worker: ThreadPoolExecutor | None = None
        self.said: list[str] = []
        self.finals: list[str] = []
        self.ptr, self.codes, self.fams = array("q", [0]), array("q"), array("q")
        self.bodies: list[str] = []
        self.paths: list[str] = []
        self.by_python: dict[int, int] = {}
        # A tool name's code when its arguments are a dict (the kind depends on them only for a
        # command whose arguments are not a dict), its claim families, and whether it is NUL-free.
        self.name_codes: dict[str, tuple[int, int, bool]] = {}

    def add(self, row: Mapping[str, Any]) -> Seen | None:
        """Read one row (``trace_flags`` reads a row whose steps are not a list of dicts).

        Returns what the hand columns of ``hack_scan`` read from the same steps, so that they
        are walked once (``Seen``); None for a row ``trace_flags`` read.

        Raises:
            ConfigError: ``kinds`` names a kind that is not one of ``KINDS``.
        """
        raw_steps = row.get("steps") or []
        final_value = row.get("final_text")
        final = final_value if isinstance(final_value, str) else ""
        # (a list holding a dict subclass is read by trace_flags too: the same mask, slower)
        if not isinstance(raw_steps, list) or not set(map(type, raw_steps)) <= _DICT:
            flags = trace_flags.trace_flags(row, kinds=self.kinds)
            self.by_python[len(self.done) + len(self.said)] = _mask(flags)
            raw_steps = None
        parts: list[str] = []
        texts: list[str] | None = None  # the text contents, when not every content is a str
        tools: list[str] = []
        users = 0
        cut = False
        plain = self.plain
        codes, fams, bodies, paths = self.codes, self.fams, self.bodies, self.paths
        name_codes = self.name_codes
        for step in raw_steps or ():
            role = step.get("role")
            if role == "assistant":
                content = step.get("content")
                if type(content) is str:
                    parts.append(content)
                    if texts is not None:
                        texts.append(content)
                else:
                    if texts is None:
                        texts = parts.copy()
                    if isinstance(content, str):
                        texts.append(content)
                    missing = content is None and "content" not in step
                    parts.append("" if missing else str(content))
            elif role == "user":
                users += 1
            if not cut and ("truncated" in step or "finish_reason" in step):
                cut = step.get("truncated") is True or step.get("finish_reason") == "length"
            if "tool" not in step:
                continue
            tool = step["tool"]
            if type(tool) is str:
                name = tool
                tools.append(tool)
            else:
                name = str(tool)
                if isinstance(tool, str):
                    tools.append(tool)
            raw_args = step.get("arguments")
            known = name_codes.get(name)
            if known is None:
                known = name_codes[name] = (_kind_code(name, {}, self.kinds), _families(name),
                                            "\x00" not in name)
            if plain and not (known[2] and type(tool) is str):
                plain = False
            code = known[0]
            if code & 15 == _COMMAND and not isinstance(raw_args, dict):
                code = _kind_code(name, raw_args, self.kinds)
            if step_failed(step):
                code |= _FAILED
            if tool:
                code |= _CLAIMS
                fams.append(known[1])
            else:
                fams.append(0)
            codes.append(code)
            if isinstance(raw_args, dict) and raw_args:
                values = raw_args.values()
                types = set(map(type, values))
                # Text values only (the common case) are joined as they are: str(v) is v.
                bodies.append("\n".join(values) if types == _STR else _text_args(raw_args))
                if plain and not (type(raw_args) is dict and types <= _PLAIN
                                  and set(map(type, raw_args)) == _STR):
                    plain = False
                paths.append(" ".join(str(v) for k, v in raw_args.items()
                                      if "path" in k or "file" in k) if code & 7 in (1, 2) else "")
            else:
                bodies.append("")
                paths.append("")
                plain = plain and not raw_args
        parts.append(final)
        said = "\n".join(parts)
        self.said.append(said)
        self.finals.append(final)
        self.ptr.append(len(codes))
        if len(self.said) >= self.BLOCK:
            self._flush()
        if raw_steps is None:
            return None
        if texts is None and final_value is final:
            text = said
        else:
            if texts is None:
                texts = parts[:-1]
            if isinstance(final_value, str):
                texts.append(final_value)
            text = "\n".join(texts)
        return text, users, tools, cut, plain

    def _flush(self) -> None:
        """Start the kernel on the rows read so far (in the background when native); new block."""
        args = (trace_patterns(), list(_FAMILIES), self.said, self.finals, self.ptr, self.codes,
                self.fams, self.bodies, self.paths)
        if _backend.KERNEL_BACKENDS.get("trace_masks") == "rust":
            if self.worker is None:
                self.worker = ThreadPoolExecutor(max_workers=1)
            self.pending.append(self.worker.submit(_backend.trace_masks, *args))
        else:
            self.done.extend(_backend.trace_masks(*args))
        self.said, self.finals, self.bodies, self.paths = [], [], [], []
        self.ptr, self.codes, self.fams = array("q", [0]), array("q"), array("q")

    def masks(self) -> list[int]:
        """Each row's flag mask, in the order the rows were added.

        Raises:
            ValueError: the kernel refused its inputs.
        """
        if self.said:
            self._flush()
        try:
            for block in self.pending:
                self.done.extend(block.result())
        finally:
            self.pending = []
            if self.worker is not None:
                self.worker.shutdown()
                self.worker = None
        out = self.done
        for i, mask in self.by_python.items():
            out[i] = mask
        return out


def flag_masks(
    rows: Iterable[Mapping[str, Any]], kinds: Mapping[str, str] | None = None
) -> list[int]:
    """Return each row's flag mask: bit ``k`` set when ``FLAGS[k]`` fires (``trace_flags``).

    Raises:
        ConfigError: ``kinds`` names a kind that is not one of ``KINDS``.
    """
    inputs = TraceInputs(kinds)
    for row in rows:
        inputs.add(row)
    return inputs.masks()
