"""Which test modules reach a kernel: the ``WHILEAI_PURE=1`` pass runs only those.

``make pytest`` runs the suite twice: natively, then with ``WHILEAI_PURE=1`` so that every
public call is checked on the pure-Python kernels too. The switch changes one thing, what
``whileai._backend`` serves: the kernels and the names saying which backend serves them
(``tests/kernel_watch/kernel_watch.py``). A test module that never reads one of those runs the
same code in both passes, so the pure pass does not even collect it: ``BACKEND_FREE`` lists
these modules. (The kernel tests that take the ``backend`` or ``both_backends`` fixture call
``whileai._native`` and ``whileai._pure`` directly, both in each pass; when that is all a module
does, it is listed too.)

The list cannot rot silently: in the native pass ``whileai._backend`` is watched, in the test
process and in every Python a test starts (``kernel_watch/sitecustomize.py`` on
``PYTHONPATH``), and a test of a listed module that reads one of those names fails, naming
them: when importing the module, in the test, in a session or module fixture it uses (whenever
that fixture was set up) or in a subprocess or server it drives. A new module is not listed, so
it runs in both passes until someone lists it. (A listed module named on the command line is
still collected: ``WHILEAI_PURE=1 pytest tests/test_io.py`` runs it.)

To rebuild the list, run the native pass with ``WHILEAI_KERNEL_REACH=/tmp/reach.json``: the file
names what each module (and each wider-scoped fixture) read; a module absent from it read
nothing.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

WATCH_DIR = Path(__file__).resolve().parent / "kernel_watch"

# Test modules that read no kernel through whileai._backend (measured, see above).
BACKEND_FREE: frozenset[str] = frozenset({
    "test_code_sandbox.py", "test_compat.py", "test_config_errors.py", "test_engine_spec.py",
    "test_export_hf.py", "test_export_trl.py", "test_gc_pause.py", "test_grading_kernel.py",
    "test_grading_lineage.py", "test_grading_verify.py", "test_grading_verify_json.py",
    "test_grading_verify_math.py", "test_house_docs.py", "test_house_layers.py", "test_io.py",
    "test_kernels_differential.py", "test_kernels_embed.py", "test_kernels_ngram.py",
    "test_kernels_normalize.py", "test_kernels_primitives.py", "test_kernels_resample.py",
    "test_kernels_scan.py", "test_kernels_scan_columns.py", "test_kernels_select.py",
    "test_models_backends.py",
    "test_models_judge.py", "test_models_logprobs.py", "test_platform_accounts.py",
    "test_platform_atomic.py", "test_platform_cli.py", "test_platform_concurrency.py",
    "test_platform_keys.py", "test_platform_refs.py", "test_platform_runs.py",
    "test_platform_trace_summary.py", "test_platform_traces.py", "test_recipes_layout.py",
    "test_run_stop.py",
    "test_rows_schema.py", "test_rows_scrub.py", "test_traces_aim.py", "test_traces_cli.py",
    "test_traces_fuzz.py", "test_traces_otel.py", "test_traces_receiver.py",
})


def pure_pass() -> bool:
    """True under ``WHILEAI_PURE=1`` (the flag as ``whileai.config.flag`` reads it)."""
    return bool(os.environ.get("WHILEAI_PURE"))


class KernelReach:
    """The watch of the native pass: who read what, and the failures of listed modules."""

    def __init__(self, record: str | None) -> None:
        self.record = record
        self.context: list[str] = ["session"]  # innermost last: session, module, fixture
        self.reads: dict[str, set[str]] = defaultdict(set)  # context -> names read
        self.item_reads: set[str] = set()
        # Threads alive when the running test started: a thread an earlier test left behind (an
        # abandoned rollout still finishing) may read a kernel meanwhile; that is not this test's.
        self.earlier_threads: set[int] = set()
        self.log_start = 0
        fd, self.log = tempfile.mkstemp(prefix="whileai-kernel-log-")
        os.close(fd)
        os.environ["WHILEAI_KERNEL_LOG"] = self.log
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(WATCH_DIR), os.environ.get("PYTHONPATH", "")) if p)
        sys.path.insert(0, str(WATCH_DIR))
        import kernel_watch

        kernel_watch.install(self._read)
        import whileai._backend  # noqa: F401  (watched from its first import)

    def _read(self, name: str) -> None:
        context = self.context[-1]
        if context == "item":
            if threading.get_ident() not in self.earlier_threads:
                self.item_reads.add(name)
        else:
            self.reads[context].add(name)

    def close(self) -> None:
        os.environ.pop("WHILEAI_KERNEL_LOG", None)
        Path(self.log).unlink(missing_ok=True)
        if self.record:
            Path(self.record).write_text(json.dumps(
                {k: sorted(v) for k, v in sorted(self.reads.items()) if v}, indent=1) + "\n")

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, Any]:
        if not isinstance(collector, pytest.Module):
            return (yield)
        self.context.append(collector.path.name)
        try:
            report = yield
        finally:
            self.context.pop()
        reads = self.reads.get(collector.path.name)
        if reads and collector.path.name in BACKEND_FREE:
            report.outcome = "failed"
            report.longrepr = self._listed_but_read(collector.path.name, reads, "at import")
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any, request: Any) -> Generator[None, Any, Any]:
        if fixturedef.scope == "function":
            return (yield)
        self.context.append(f"fixture {fixturedef.argname}")
        try:
            return (yield)
        finally:
            self.context.pop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        self.item_reads = set()
        self.earlier_threads = {t.ident for t in threading.enumerate()
                                if t is not threading.main_thread() and t.ident is not None}
        self.context.append("item")
        with open(self.log, "a") as log:  # a fresh line: subprocesses log afresh after it
            log.write(f"-- {item.nodeid}\n")
            self.log_start = log.tell()
        try:
            return (yield)
        finally:
            self.context.pop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        if call.when != "teardown":
            return report
        module = item.path.name
        with open(self.log) as log:
            log.seek(self.log_start)
            spawned = {line.split()[1] for line in log if not line.startswith("-- ")}
        fixtures = {name: self.reads[f"fixture {name}"] for name in item.fixturenames
                    if self.reads.get(f"fixture {name}")}
        reads = self.item_reads | spawned | {n for names in fixtures.values() for n in names}
        self.reads[module] |= reads
        if reads and module in BACKEND_FREE and report.outcome != "failed":
            where = [f"in the test: {sorted(self.item_reads)}"] if self.item_reads else []
            where += [f"in a subprocess: {sorted(spawned)}"] if spawned else []
            where += [f"in fixture {k}: {sorted(v)}" for k, v in fixtures.items()]
            report.outcome = "failed"
            report.longrepr = self._listed_but_read(module, reads, "; ".join(where))
        return report

    @staticmethod
    def _listed_but_read(module: str, reads: set[str], where: str) -> str:
        return (f"{module} is in BACKEND_FREE (tests/kernel_reach.py) but read "
                f"whileai._backend.{', '.join(sorted(reads))} ({where}): remove it from the "
                "list so that the WHILEAI_PURE=1 pass runs it")


def configure(config: pytest.Config) -> None:
    """Under ``WHILEAI_PURE=1`` leave out the listed modules; otherwise watch the backend."""
    missing = sorted(n for n in BACKEND_FREE if not (Path(__file__).parent / n).is_file())
    if missing:
        raise pytest.UsageError(f"BACKEND_FREE names modules that do not exist: {missing}")
    if pure_pass():
        return
    reach = KernelReach(os.environ.get("WHILEAI_KERNEL_REACH") or None)
    config.pluginmanager.register(reach, "kernel_reach")
    config.add_cleanup(reach.close)


def ignore_collect(collection_path: Path) -> bool | None:
    """True for a listed module under ``WHILEAI_PURE=1``: the pure pass does not import it."""
    if pure_pass() and collection_path.name in BACKEND_FREE \
            and collection_path.parent == Path(__file__).parent:
        return True
    return None
