"""The two programs a code check runs, each in its own sandbox (standalone: stdlib only).

``python -I -B -c <this file> <config json>`` with ``role``:

- ``candidate``: confine, read the solution from stdin, run it, then serve the test runner's
  requests (call a function, read an attribute, ...) over two pipes. Every answer is a plain
  value (``None``, bool, int, float, str, bytes, complex, list, tuple, set, dict of those) or a
  numbered handle to an object that stays in this process.
- ``tests``: confine, read the hidden tests and a nonce from stdin, bind the candidate's names
  to proxies, run each test (and every ``test_*`` function a test defines), and write the verdict
  with the nonce to a pipe only this process holds. Values come back as real builtins, so
  ``==`` is Python's own, never the candidate's ``__eq__``.
- ``probe``: confine and say ``ok`` (does the sandbox work here?).

It runs after ``_confine.py``'s source in the same program, which defines ``confine``.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time the program starts with _confine.py's source
    from whileai.simulations.judge.verify._confine import confine

_PLAIN_LEAVES = (type(None), bool, int, str)
_MAX_DEPTH = 64
_MAX_MSG = 16 * 2**20


# -- the wire: one JSON message per line ----------------------------------------------------------


class Channel:
    """Line-delimited JSON over a pair of pipe fds."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self.reader = os.fdopen(rfd, "rb")
        self.writer = os.fdopen(wfd, "wb")

    def send(self, message: Any) -> None:
        self.writer.write(json.dumps(message, allow_nan=False).encode() + b"\n")
        self.writer.flush()

    def recv(self) -> Any:
        line = self.reader.readline(_MAX_MSG)
        if not line:
            raise EOFError("the other side closed the channel")
        return json.loads(line)


def _describe(exc: BaseException) -> list[str]:
    try:
        text = str(exc)
    except BaseException:
        text = "?"
    return [type(exc).__name__ if type(exc).__module__ == "builtins" else "Exception",
            f"{type(exc).__name__}: {text}"[:300]]


# -- the candidate side -------------------------------------------------------------------------


class Handles:
    """Objects that stay in the candidate process, by number."""

    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}

    def put(self, obj: Any) -> dict[str, int]:
        key = len(self.objects) + 1
        self.objects[key] = obj
        return {"$h": key}

    def encode(self, value: Any, depth: int = 0) -> Any:
        kind = type(value)
        if depth > _MAX_DEPTH:
            return self.put(value)
        if kind in _PLAIN_LEAVES:
            return value
        if kind is float:
            return value if value == value and abs(value) != float("inf") else {"$f": repr(value)}
        if kind is list:
            return [self.encode(v, depth + 1) for v in value]
        if kind is tuple:
            return {"$t": [self.encode(v, depth + 1) for v in value]}
        if kind in (set, frozenset) and all(type(v) in (*_PLAIN_LEAVES, float) for v in value):
            return {"$s" if kind is set else "$fs": [self.encode(v, depth + 1) for v in value]}
        if kind is dict and all(type(k) in (*_PLAIN_LEAVES, float) for k in value):
            return {"$d": [[self.encode(k, depth + 1), self.encode(v, depth + 1)]
                           for k, v in value.items()]}
        if kind is bytes:
            return {"$b": value.hex()}
        if kind is complex:
            return {"$c": [repr(value.real), repr(value.imag)]}
        return self.put(value)

    def decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        (tag, body), = value.items()
        if tag == "$h":
            return self.objects[body]
        items = [self.decode(v) for v in body] if isinstance(body, list) else body
        return _rebuild(tag, items)


def _rebuild(tag: str, items: Any) -> Any:
    if tag == "$t":
        return tuple(items)
    if tag == "$s":
        return set(items)
    if tag == "$fs":
        return frozenset(items)
    if tag == "$d":
        return dict(items)
    if tag == "$b":
        return bytes.fromhex(items)
    if tag == "$c":
        return complex(float(items[0]), float(items[1]))
    if tag == "$f":
        return float(items)
    raise ValueError(f"unknown tag {tag!r}")


def _serve(cfg: dict[str, Any]) -> None:
    source = sys.stdin.buffer.read().decode("utf-8", "replace")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    channel = Channel(cfg["in"], cfg["out"])
    handles = Handles()
    ns: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
    try:
        exec(compile(source, "solution.py", "exec"), ns)
    except BaseException as exc:
        channel.send({"load_error": _describe(exc)[1]})
        return
    names = {k: handles.encode(v) for k, v in ns.items()
             if not k.startswith("__") and not hasattr(builtins, k)}
    channel.send({"names": names})
    while True:
        try:
            msg = channel.recv()
        except EOFError:
            return
        try:
            channel.send({"ok": handles.encode(_apply(handles, msg))})
        except BaseException as exc:
            channel.send({"err": _describe(exc)})


def _apply(handles: Handles, msg: dict[str, Any]) -> Any:
    op, obj = msg["op"], handles.objects[msg["h"]]
    arg = handles.decode(msg.get("arg"))
    if op == "call":
        return obj(*arg, **handles.decode({"$d": msg["kw"]}))
    if op == "getattr":
        return getattr(obj, arg)
    if op == "setattr":
        setattr(obj, arg[0], arg[1])
        return None
    if op == "getitem":
        return obj[arg]
    if op == "setitem":
        obj[arg[0]] = arg[1]
        return None
    if op == "len":
        return len(obj)
    if op == "iter":
        return iter(obj)
    if op == "next":
        return next(obj)
    if op == "contains":
        return bool(arg in obj)
    if op == "bool":
        return bool(obj)
    if op == "repr":
        return str(repr(obj))[:300]
    raise ValueError(f"unknown op {op!r}")


# -- the test side ------------------------------------------------------------------------------


class CandidateError(Exception):
    """An exception the candidate raised whose type is not a builtin one."""


class CandidateGone(Exception):
    """The candidate process ended or broke the protocol."""


def _run_tests(cfg: dict[str, Any]) -> None:
    payload = json.loads(sys.stdin.buffer.read())
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    verdict = os.fdopen(cfg["verdict"], "w")
    channel = Channel(cfg["in"], cfg["out"])
    remote = _Remote(channel)

    def finish(body: dict[str, Any]) -> None:
        verdict.write(json.dumps({"nonce": payload["nonce"], **body}))
        verdict.close()

    try:
        hello = channel.recv()
    except (EOFError, ValueError):
        finish({"load_error": "the program crashed or exited before it finished loading"})
        return
    if not isinstance(hello, dict) or "names" not in hello:
        load_error = hello.get("load_error") if isinstance(hello, dict) else None
        finish({"load_error": str(load_error or "the program sent no names")[:300]})
        return
    ns: dict[str, Any] = {"__name__": "__test__", "__builtins__": builtins}
    for name, value in hello["names"].items():
        if isinstance(name, str) and not hasattr(builtins, name):
            try:
                ns[name] = remote.decode(value)
            except Exception:
                continue
    results: list[list[Any]] = []
    for i, test in enumerate(payload["tests"]):
        before = {k: v for k, v in ns.items() if k.startswith("test")}
        try:
            exec(compile(test, f"test_{i}", "exec"), ns)
        except BaseException as exc:
            results.append([False, _describe(exc)[1]])
            continue
        defined = [v for k, v in ns.items()
                   if k.startswith("test") and isinstance(v, types.FunctionType)
                   and before.get(k) is not v]
        if not defined:
            results.append([True, ""])
        for fn in defined:
            try:
                fn()
                results.append([True, ""])
            except BaseException as exc:  # noqa: PERF203 - one verdict per test function
                results.append([False, f"{getattr(fn, '__name__', 'test')}: "
                                       f"{_describe(exc)[1]}"[:300]])
    finish({"results": results})


class _Remote:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.gone = ""

    def ask(self, op: str, handle: int, arg: Any = None, kw: Any = None) -> Any:
        if self.gone:
            raise CandidateGone(self.gone)
        message: dict[str, Any] = {"op": op, "h": handle, "arg": self.encode(arg)}
        if kw is not None:
            message["kw"] = [[k, self.encode(v)] for k, v in kw.items()]
        try:
            self.channel.send(message)
            answer = self.channel.recv()
        except (EOFError, OSError, ValueError) as exc:
            self.gone = f"the candidate process ended ({type(exc).__name__})"
            raise CandidateGone(self.gone) from None
        if not isinstance(answer, dict):
            raise CandidateGone("the candidate sent a malformed answer")
        if "ok" in answer:
            return self.decode(answer["ok"])
        kind, text = answer.get("err") or ["Exception", "?"]
        exc_type = getattr(builtins, str(kind), None)
        if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
            exc_type = CandidateError
        raise exc_type(str(text)[:300])

    def encode(self, value: Any, depth: int = 0) -> Any:
        kind = type(value)
        if depth > _MAX_DEPTH:
            raise TypeError("value nested too deep to pass to the candidate")
        if isinstance(value, _Proxy):
            return {"$h": value._handle}
        if kind in _PLAIN_LEAVES:
            return value
        if kind is float:
            return value if value == value and abs(value) != float("inf") else {"$f": repr(value)}
        if kind is list:
            return [self.encode(v, depth + 1) for v in value]
        if kind in (tuple, set, frozenset):
            tag = "$t" if kind is tuple else "$s" if kind is set else "$fs"
            return {tag: [self.encode(v, depth + 1) for v in value]}
        if kind is dict:
            return {"$d": [[self.encode(k, depth + 1), self.encode(v, depth + 1)]
                           for k, v in value.items()]}
        if kind is bytes:
            return {"$b": value.hex()}
        if kind is complex:
            return {"$c": [repr(value.real), repr(value.imag)]}
        raise TypeError(f"a {kind.__name__} cannot be passed to the candidate's code")

    def decode(self, value: Any, depth: int = 0) -> Any:
        """Strictly rebuild a plain value; anything unexpected ends the candidate's turn."""
        if depth > _MAX_DEPTH + 2:
            raise CandidateGone("the candidate sent a value nested too deep")
        kind = type(value)
        if kind in _PLAIN_LEAVES or kind is float:
            return value
        if kind is list:
            return [self.decode(v, depth + 1) for v in value]
        if kind is not dict or len(value) != 1:
            raise CandidateGone("the candidate sent a malformed value")
        (tag, body), = value.items()
        if tag == "$h":
            if type(body) is not int:
                raise CandidateGone("the candidate sent a malformed handle")
            return _Proxy(self, body)
        try:
            items = ([self.decode(v, depth + 1) for v in body] if tag in ("$t", "$s", "$fs")
                     else [tuple(self.decode(p, depth + 1) for p in pair) for pair in body]
                     if tag == "$d" else body)
            return _rebuild(tag, items)
        except CandidateGone:
            raise
        except Exception as exc:
            raise CandidateGone(f"the candidate sent a malformed value ({exc})") from None


class _Proxy:
    """An object living in the candidate process. ``==`` is identity: never the candidate's."""

    __slots__ = ("_handle", "_remote")

    def __init__(self, remote: _Remote, handle: int) -> None:
        object.__setattr__(self, "_remote", remote)
        object.__setattr__(self, "_handle", handle)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._remote.ask("call", self._handle, list(args), kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._remote.ask("getattr", self._handle, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._remote.ask("setattr", self._handle, [name, value])

    def __getitem__(self, key: Any) -> Any:
        return self._remote.ask("getitem", self._handle, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._remote.ask("setitem", self._handle, [key, value])

    def __len__(self) -> int:
        n = self._remote.ask("len", self._handle)
        if type(n) is not int:
            raise TypeError("len() of a candidate object must be an int")
        return n

    def __iter__(self) -> Any:
        it = self._remote.ask("iter", self._handle)
        while True:
            try:
                yield self._remote.ask("next", it._handle)
            except StopIteration:  # noqa: PERF203 - the end of the iteration
                return

    def __contains__(self, item: Any) -> bool:
        return self._remote.ask("contains", self._handle, item) is True

    def __bool__(self) -> bool:
        return self._remote.ask("bool", self._handle) is True

    def __repr__(self) -> str:
        return str(self._remote.ask("repr", self._handle))

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


def main(argv: list[str]) -> None:
    cfg = json.loads(argv[1])
    confine(cfg)
    role = cfg["role"]
    if role == "probe":
        print("ok", os.getuid(), flush=True)
    elif role == "candidate":
        _serve(cfg)
    else:
        _run_tests(cfg)


if __name__ == "__main__":
    main(sys.argv)
