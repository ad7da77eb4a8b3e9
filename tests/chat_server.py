"""A scripted chat-completions server on 127.0.0.1 for the model-backend tests (no network).

``ChatServer(handler)`` answers every request with ``handler(path, body, index) -> Answer``;
``ChatServer.scripted([...])`` plays a list of answers in order (the last one repeats). Every
request body is recorded in ``server.requests`` so tests can check the wire format.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    """One scripted HTTP answer: a JSON body (dict) or raw text, with status/headers/delay.

    ``cut`` breaks the body off halfway and drops the connection: ``"length"`` announces the
    full ``Content-Length``, ``"chunked"`` sends it as a chunk that never ends."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    cut: str = ""


def completion(
    content: str | None = None,
    *,
    tool_calls: Sequence[tuple[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = (11, 7),
    logprobs: Sequence[float] | None = None,
    model: str = "test-model",
    call_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A chat-completions body. ``tool_calls`` are ``(name, arguments)``; a str argument is
    sent as-is (to test non-JSON), anything else is JSON-encoded."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": (call_ids[i] if call_ids else f"srv_{i}"),
                "type": "function",
                "function": {"name": name,
                             "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(tool_calls)
        ]
    choice: dict[str, Any] = {
        "index": 0, "message": message,
        "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
    }
    if logprobs is not None:
        choice["logprobs"] = {"content": [{"token": f"t{i}", "logprob": lp, "top_logprobs": []}
                                          for i, lp in enumerate(logprobs)]}
    body: dict[str, Any] = {"id": "cmpl-1", "object": "chat.completion", "model": model,
                            "choices": [choice]}
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                         "total_tokens": usage[0] + usage[1]}
    return body


Handler = Callable[[str, dict[str, Any], int], Answer]


class ChatServer:
    """A threaded HTTP server speaking just enough of the OpenAI API for the tests."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with outer._lock:
                    index = len(outer.requests)
                    outer.requests.append(body)
                    outer.paths.append(self.path)
                    outer.headers.append(dict(self.headers.items()))
                answer = outer.handler(self.path, body, index)
                if answer.delay:
                    threading.Event().wait(answer.delay)
                payload = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
                data = payload.encode()
                try:
                    self.send_response(answer.status)
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", "application/json")
                    if answer.cut == "chunked":
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        self.wfile.write(b"%x\r\n" % len(data) + data[: len(data) // 2])
                    else:
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data[: len(data) // 2] if answer.cut else data)
                    if answer.cut:
                        self.wfile.flush()
                        self.close_connection = True
                except OSError:  # the client gave up (timeout test)
                    self.close_connection = True

            do_GET = _serve
            do_POST = _serve

        class _Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False
            request_queue_size = 128

            def handle_error(self, request: Any, client_address: Any) -> None:
                return

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)

    @classmethod
    def scripted(cls, answers: Sequence[Answer | dict[str, Any]]) -> ChatServer:
        """Play ``answers`` in order of chat requests; the last one answers every later request.

        ``GET /models`` is answered with one model, ``served-model``, outside the script."""
        items = [a if isinstance(a, Answer) else Answer(a) for a in answers]
        played = [0]
        lock = threading.Lock()

        def handler(path: str, _body: dict[str, Any], _i: int) -> Answer:
            if path.endswith("/models"):  # bare-URL specs ask which model is served
                return Answer({"object": "list", "data": [{"id": "served-model"}]})
            with lock:
                n = played[0]
                played[0] += 1
            return items[min(n, len(items) - 1)]

        return cls(handler)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The bodies of the POST /chat/completions requests, in arrival order."""
        with self._lock:
            return [b for p, b in zip(self.paths, self.requests, strict=True)
                    if p.endswith("/chat/completions")]


@contextmanager
def serve(handler_or_script: Handler | Sequence[Answer | dict[str, Any]]) -> Iterator[ChatServer]:
    """Run a :class:`ChatServer` for the length of a ``with`` block."""
    if callable(handler_or_script):
        server = ChatServer(handler_or_script)
    else:
        server = ChatServer.scripted(handler_or_script)
    server.start()
    try:
        yield server
    finally:
        server.close()
