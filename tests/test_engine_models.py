"""Model agents plug into the engine: a local OpenAI-compatible server, no network."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS


class _Chat(BaseHTTPRequestHandler):
    calls: list[dict[str, Any]] = []  # noqa: RUF012 - shared by the test server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Chat.calls.append(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function",
                "function": {"name": "get_order", "arguments": json.dumps({"order_id": "1"})}}]}
        else:
            message = {"role": "assistant", "content": "Done checking."}
        payload = json.dumps({"choices": [{"message": message, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 3},
                              "model": "m"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Chat.calls = []
    httpd = HTTPServer(("127.0.0.1", 0), _Chat)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_model_spec_agent_plays_through_the_mock_world(server: str) -> None:
    data = zps.simulate(agent=f"vllm:m@{server}", tools=TOOLS, system_prompt="Help.",
                        simulator=False, budget=3, progress=False, advanced={"concurrency": 1})
    assert len(data) == 3
    for row in data.trajectories:
        tool_steps = [s for s in row["steps"] if "tool" in s]
        assert tool_steps
        assert tool_steps[0]["tool"] == "get_order"
        assert isinstance(tool_steps[0]["result"], dict)  # answered by the mock world
        assert row["final_text"] == "Done checking."
    assert _Chat.calls
    assert _Chat.calls[0]["messages"][0] == {"role": "system", "content": "Help."}
