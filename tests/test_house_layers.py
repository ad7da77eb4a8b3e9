"""The package's import graph has no circles, and the lower layers never import a stage.

The graph is read from the source with ``ast`` (no imports run): every ``import`` and
``from ... import`` anywhere in a module (inside functions too), every
``importlib.import_module("whileai...")`` with a literal name, and the ``__init__`` of each
package an import passes through (importing ``a.b.c`` runs ``a/b/__init__.py`` first).
The root packages ``whileai`` and ``whileai.simulations`` re-export everything and are left out of
that last rule; an import of a name they re-export still counts as an edge to them.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python"
ROOTS = ("whileai", "whileai.simulations")
# The one table of allowed edges between packages: a unit is a top-level module or package of
# ``whileai`` (``rows``, ``platform``, ``server``, ...) or a package or module directly under
# ``whileai.simulations`` (``simulations.judge``, ``simulations.data``); ``simulations`` is the
# public surface (its ``__init__``) and ``whileai`` the package root. Reading it bottom up: the
# settings and errors, ``rows`` (the row contract and its files), the platform client, the model
# clients and the agent spec, the world, generation, then the stages measure < clean < judge <
# selection < train < export < report < ingest < play, then simulate and its result objects, the
# public surface, and the CLI, the server and the Ray adapters on top. The table must be a DAG.
ALLOWED: dict[str, frozenset[str]] = {unit: frozenset(deps) for unit, deps in {
    "whileai": {"_backend", "_version", "context", "errors", "platform"},
    "__main__": {"cli"},
    "_version": set(),
    "cuts_text": set(),
    "retry": set(),
    "_gc": set(),
    "_pure": set(),
    "config": set(),
    "context": set(),
    "secrets": set(),
    "errors": {"secrets"},
    "_backend": {"_pure", "_version", "config", "errors"},
    "rows": {"errors", "secrets"},
    "platform": {"_gc", "config", "cuts_text", "errors", "retry", "rows", "secrets"},
    "simulations.models": {"_backend", "config", "context", "errors", "retry", "secrets"},
    "simulations.agent": {"errors", "rows"},
    "simulations.world": {"_backend", "simulations.agent"},
    "simulations.generate": {"_backend", "errors", "simulations.agent", "simulations.models",
                             "simulations.world"},
    "simulations.measure": {"_backend", "errors", "rows"},
    "simulations.clean": {"_backend", "_gc", "errors", "platform", "rows", "simulations.measure",
                          "simulations.models"},
    "simulations.pushable": {"platform"},
    "simulations.judge": {"simulations.pushable",
                          "_backend", "errors", "platform", "rows", "secrets", "simulations.clean",
                          "simulations.measure", "simulations.models"},
    "simulations.selection": {"errors", "rows", "simulations.clean", "simulations.judge",
                              "simulations.measure"},
    "simulations.training": {"retry", "config", "errors", "platform", "rows", "simulations.clean",
                          "simulations.judge", "simulations.measure", "simulations.models"},
    "simulations.export": {"_backend", "errors", "platform", "rows", "simulations.agent",
                           "simulations.clean", "simulations.selection", "simulations.training",
                           "simulations.world"},
    "simulations.report": {"rows", "simulations.clean", "simulations.judge",
                           "simulations.measure"},
    "simulations.ingest": {"errors", "platform", "rows", "simulations.agent", "simulations.clean",
                           "simulations.generate"},
    "simulations.play": {"_backend", "_version", "errors", "rows", "secrets", "simulations.agent",
                         "simulations.export", "simulations.generate", "simulations.judge",
                         "simulations.models", "simulations.world"},
    "simulations.verify": {"simulations.judge"},
    "simulations.aliases": set(),
    "simulations.data": {"simulations.pushable",
                         "errors", "platform", "rows", "simulations.generate",
                         "simulations.judge", "simulations.measure", "simulations.models"},
    "simulations.prepare": {"errors", "platform", "rows", "simulations.agent", "simulations.data",
                            "simulations.generate", "simulations.ingest", "simulations.models",
                            "simulations.play", "simulations.world"},
    "simulations.simulation": {"simulations.prepare",
                               "errors", "platform", "rows", "simulations.agent",
                               "simulations.data", "simulations.generate", "simulations.ingest",
                               "simulations.models", "simulations.play", "simulations.world"},
    "simulations": {"platform", "rows", "simulations.agent", "simulations.aliases",
                    "simulations.clean",
                    "simulations.data", "simulations.export", "simulations.generate",
                    "simulations.ingest", "simulations.judge", "simulations.measure",
                    "simulations.models", "simulations.play", "simulations.report",
                    "simulations.selection", "simulations.simulation", "simulations.training",
                    "simulations.verify", "simulations.world"},
    "server": {"_gc", "_version", "config", "cuts_text", "errors", "platform", "rows",
               "simulations.clean",
               "simulations.ingest", "simulations.judge", "simulations.measure",
               "simulations.report", "simulations.selection"},
    "scale": {"_backend", "_pure", "errors", "rows", "simulations.clean", "simulations.data",
              "simulations.generate", "simulations.models", "simulations.simulation"},
    "commands": {"_backend", "_version", "config", "errors", "platform", "rows", "server",
                 "simulations", "simulations.agent", "simulations.clean", "simulations.ingest",
                 "simulations.judge", "simulations.measure", "simulations.models",
                 "simulations.report", "simulations.selection", "simulations.training",
                 "simulations.verify"},
    "cli": {"_version", "commands"},
}.items()}
# Edges that still break the table, each with what would remove it. The test below fails when one
# is gone (delete it here) and on any edge that is neither allowed nor listed.
DEBTS: dict[tuple[str, str], str] = {
    ("whileai.platform.datasets", "whileai.simulations.measure.power"):
        "push_rows warns on an underpowered holdout: the caller should measure, then push",
    ("whileai.platform.datasets", "whileai.simulations.selection.gate"):
        "push_rows(gate=True) runs publish_gate: the caller should gate, then push",
    ("whileai.platform.push", "whileai.simulations.selection.gate"):
        "push_run gates: it belongs above selection (one push(), the client's issue)",
    ("whileai.platform.push", "whileai.simulations.selection.holdout"):
        "push_run splits a holdout: as above",
    ("whileai.simulations.selection.rank", "whileai.simulations.export.checklist"):
        "rank scores conduct with export's checklist, whose path is stored in exported specs",
}
# Past one machine: the Ray adapters sit above everything and are the only code importing Ray.
SCALE = "whileai.scale"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package) for every module under python/whileai."""
    found = {}
    for path in sorted((PACKAGE / "whileai").rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _known(name: str) -> str | None:
    """The longest module prefix of ``name`` (``a.b.func`` -> ``a.b``), or None."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _literal_import(node: ast.Call) -> str | None:
    """``importlib.import_module("whileai.x")`` / ``__import__("whileai.x")``: the name."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
            and arg.value.startswith("whileai"):
        return arg.value
    return None


def _compiled(name: str) -> bool:
    """Whether ``name`` is the compiled core: a stub and no Python source (it imports nothing)."""
    stub = PACKAGE.joinpath(*name.split(".")).with_suffix(".pyi")
    return name not in MODULES and stub.exists()


def _imports(module: str) -> set[str]:
    """Every whileai module ``module`` imports, at any depth of its code."""
    path, is_package = MODULES[module]
    here = module if is_package else module.rpartition(".")[0]
    targets: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(_known(a.name) for a in node.names if a.name.startswith("whileai"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.startswith("whileai") and not _compiled(source):
                for alias in node.names:  # `from pkg import submodule` imports the submodule
                    full = f"{source}.{alias.name}"
                    if not _compiled(full):
                        targets.add(full if full in MODULES else _known(source))
        elif (isinstance(node, ast.Call) and (name := _literal_import(node))
              and not _compiled(name)):
            targets.add(_known(name))
    deps = {t for t in targets if t is not None}
    for dep in list(deps):  # the packages an import passes through run first
        parts = dep.split(".")
        for i in range(1, len(parts)):
            package = ".".join(parts[:i])
            if package not in ROOTS and package in MODULES and not _within(module, package):
                deps.add(package)
    deps.discard(module)
    return deps


GRAPH = {module: _imports(module) for module in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_the_imports_it_must() -> None:
    """The reader is not blind: a known import, a function-level one and a package edge."""
    assert "whileai.simulations.measure.stats" in GRAPH["whileai.simulations.clean.trace_flags"]
    assert "whileai._backend" in GRAPH["whileai.simulations.generate.grid"]
    assert "whileai.simulations.export" in GRAPH["whileai.simulations.play.grading"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles() -> None:
    assert _cycles(GRAPH) == []


def _unit(module: str) -> str:
    """The row of ALLOWED a module belongs to (see the table's comment)."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "simulations":
        return "simulations." + parts[2]
    return parts[1] if len(parts) > 1 else "whileai"


def _debt(module: str, dep: str) -> bool:
    return any(module == m and _within(d, dep) for m, d in DEBTS)


def test_the_allowed_table_is_a_dag_over_every_package() -> None:
    assert _cycles({u: set(d) for u, d in ALLOWED.items()}) == []
    assert sorted({_unit(m) for m in MODULES} - set(ALLOWED)) == [], "add the unit to ALLOWED"
    assert sorted({d for deps in ALLOWED.values() for d in deps} - set(ALLOWED)) == []


def test_every_import_edge_is_in_the_table() -> None:
    wrong = sorted(f"{m} -> {d}" for m in GRAPH for d in GRAPH[m]
                   if _unit(m) != _unit(d) and _unit(d) not in ALLOWED.get(_unit(m), ())
                   and not _debt(m, d))
    assert wrong == []


def test_the_listed_debts_still_exist() -> None:
    """A debt that was paid is deleted from DEBTS, so the table says what is true."""
    assert sorted(f"{m} -> {d}" for m, d in DEBTS if d not in GRAPH.get(m, ())) == []


def test_the_table_check_is_not_blind() -> None:
    graph = {"whileai.rows.jsonl": {"whileai.simulations.judge.scored"}}
    wrong = [(m, d) for m in graph for d in graph[m]
             if _unit(d) not in ALLOWED[_unit(m)] and not _debt(m, d)]
    assert wrong == [("whileai.rows.jsonl", "whileai.simulations.judge.scored")]


def test_nothing_imports_the_ray_adapters() -> None:
    assert any(_within(m, SCALE) for m in GRAPH), f"{SCALE} is not in the package any more"
    wrong = sorted(f"{m} -> {d}" for m in GRAPH if not _within(m, SCALE) for d in GRAPH[m]
                   if _within(d, SCALE))
    assert wrong == []


def _imports_ray(module: str) -> bool:
    """Does ``module`` import ``ray`` (or a submodule) anywhere in its code?"""
    tree = ast.parse(MODULES[module][0].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        if any(n == "ray" or n.startswith("ray.") for n in names):
            return True
    return False


def test_only_the_adapters_import_ray() -> None:
    """The core never imports Ray: only whileai.scale does (lazily, inside its functions)."""
    assert _imports_ray("whileai.scale._ray")  # the reader is not blind
    assert sorted(m for m in MODULES if not _within(m, SCALE) and _imports_ray(m)) == []


def _local_imports_without_reason(module: str) -> list[int]:
    """Lines of function-level ``whileai`` imports with no comment saying why they are local.

    The reason is a comment on the import's line, or on the line above its block of imports.
    """
    path = MODULES[module][0]
    lines = path.read_text(encoding="utf-8").split("\n")
    bare = []
    for func in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if not any(n.startswith("whileai") for n in names):
                continue
            row = node.lineno - 1
            while row > 0 and "#" not in lines[row] and lines[row - 1].strip().startswith(
                    ("from whileai", "import whileai", ")", "    ")) and not lines[row - 1] \
                    .strip().startswith("#") and lines[row - 1].strip() != "":
                if not lines[row - 1].strip().startswith(("from ", "import ", ")")) and \
                        not lines[row - 1].rstrip().endswith(","):
                    break
                row -= 1
            if "#" not in lines[node.lineno - 1] and not lines[row - 1].strip().startswith("#"):
                bare.append(node.lineno)
    return sorted(set(bare))


# Modules whose function-level imports still wait for a reason or a move to module level, with
# how many: a count may only fall (the CLI's `commands/` and the platform's debts already say why).
UNEXPLAINED: dict[str, int] = {
    "whileai.platform.datasets": 9,
    "whileai.platform.hub": 4,
    "whileai.platform.push": 4,
    "whileai.platform.resolve": 1,
    "whileai.rows.outbound": 2,
    "whileai.scale.simulate": 3,
    "whileai.server.migrations.versions.0007_span_proto": 1,
    "whileai.server.pages.comparison": 1,
    "whileai.server.pages.conversation": 1,
    "whileai.server.pages.hacks": 3,
    "whileai.server.pages.labels": 2,
    "whileai.server.pages.rows": 2,
    "whileai.server.pages.rowsource": 1,
    "whileai.server.pages.traceview": 1,
    "whileai.server.serve": 5,
    "whileai.server.services.cuts": 1,
    "whileai.simulations.clean.decontam": 1,
    "whileai.simulations.export.hub": 3,
    "whileai.simulations.generate.model_writer": 1,
    "whileai.simulations.ingest.traces": 1,
    "whileai.simulations.judge.benchmark": 1,
}


def test_function_level_imports_say_why() -> None:
    found = {m: len(lines) for m in MODULES if (lines := _local_imports_without_reason(m))}
    grown = sorted(f"{m}: {n} (allowed {UNEXPLAINED.get(m, 0)})" for m, n in found.items()
                   if n > UNEXPLAINED.get(m, 0))
    assert grown == [], "say why the import is local (a comment), or import at module level"
    stale = sorted(m for m, n in UNEXPLAINED.items() if found.get(m, 0) < n)
    assert stale == [], "lower UNEXPLAINED to the new count"


# Module names that are also standard-library names, each kept for a reason. They shadow only when
# Python runs with their folder as the working directory (the folder goes first on sys.path);
# `io.py` and `select/` were renamed (rows/jsonl.py, selection/). A new one fails the test.
SHADOWS: dict[str, str] = {
    "_pure/select.py": "a kernel named by the design (diversity selection); private package",
    "_pure/tokenize.py": "a kernel named by the design; private package",
    "_pure/trace.py": "the pure twin of rust/src/trace.rs (the trace-flag kernel)",
    "platform": "the design's name for the client package (whileai.platform)",
    "commands/platform.py": "the CLI area of the platform client",
    "platform/http.py": "the platform client's transport: the retry-policy helper's area",
    "secrets.py": "whileai.secrets, imported by the error family; rename when that area moves",
    "server/services/profile.py": "a dataset profile (a server service; the server owns it)",
    "simulations/judge/verify/code.py": "the code verifier (whileai.simulations.verify.code)",
    "simulations/report/html.py": "the HTML report",
}


def test_standard_library_names_are_the_listed_ones() -> None:
    import sys

    root = PACKAGE / "whileai"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                   if "__pycache__" not in p.parts
                   and (p.stem if p.suffix == ".py" else p.name if p.is_dir() else "")
                   in sys.stdlib_module_names)
    assert found == sorted(SHADOWS)
