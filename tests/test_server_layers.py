"""The server's layers as the code shows them: services know nothing of HTTP, and every error a
service raises has its one answer in ``server.errors.CODES``."""

from __future__ import annotations

import ast
from pathlib import Path

from platform_server import require_server_extra

require_server_extra()

import whileai.server  # noqa: E402
from whileai.server.errors import CODES, STATUS, api_error  # noqa: E402
from whileai.server.services import problems  # noqa: E402

_SERVER = Path(whileai.server.__file__).parent
_HTTP = ("fastapi", "starlette", "whileai.server.errors", "whileai.server.routes",
         "whileai.server.pages")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any level of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_no_service_imports_anything_of_http() -> None:
    offenders = {path.name: sorted(m for m in _imports(path) if m.startswith(_HTTP))
                 for path in sorted((_SERVER / "services").glob("*.py"))}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_pages_reach_the_client_and_the_core_gate_only_through_services() -> None:
    for path in sorted((_SERVER / "pages").glob("*.py")):
        imported = _imports(path)
        assert not {m for m in imported if m.startswith("whileai.platform")}, path.name
        assert "whileai.simulations.selection.gate" not in imported, path.name


def test_every_service_error_has_its_code_and_keeps_its_message() -> None:
    kinds = {cls for cls in vars(problems).values()
             if isinstance(cls, type) and issubclass(cls, problems.ServiceError)
             and cls is not problems.ServiceError}
    assert kinds == set(CODES)
    for kind, code in CODES.items():
        answer = api_error(kind("what went wrong", retry_after=3))
        assert (answer.code, answer.status, answer.message, answer.retry_after) == (
            code, STATUS[code], "what went wrong", 3)
