"""Shared fixtures: both kernel backends, a private WHILEAI_HOME for every test, offline HF.

The ``WHILEAI_PURE=1`` pass runs only the modules that reach a kernel; which ones, and how the
list checks itself, is in ``kernel_reach.py``.
"""

from __future__ import annotations

import gc
import importlib
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import kernel_reach

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def pytest_configure(config: pytest.Config) -> None:
    kernel_reach.configure(config)


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    return kernel_reach.ignore_collect(collection_path)


def _native_or_skip() -> ModuleType:
    try:
        return importlib.import_module("whileai._native")
    except ImportError:
        if os.environ.get("WHILEAI_REQUIRE_NATIVE"):
            raise
        pytest.skip("whileai._native is not built (WHILEAI_REQUIRE_NATIVE unset)")


@pytest.fixture(params=["rust", "python"])
def backend(request: pytest.FixtureRequest) -> ModuleType:
    """Each kernel test runs once per backend: the Rust module and the pure-Python reference."""
    if request.param == "rust":
        return _native_or_skip()
    return importlib.import_module("whileai._pure")


@pytest.fixture
def both_backends() -> tuple[ModuleType, ModuleType]:
    """(native, pure), for differential tests that compare the two on one input."""
    return _native_or_skip(), importlib.import_module("whileai._pure")


@pytest.fixture(autouse=True)
def _private_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test writes to the real home directory."""
    home = tmp_path_factory.mktemp("whileai-home")
    monkeypatch.setenv("WHILEAI_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))


@pytest.fixture
def no_model_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model role or OpenAI endpoint from the caller's environment reaches the test: a module
    opts in with ``pytestmark = pytest.mark.usefixtures("no_model_roles")``."""
    for var in ("WHILEAI_AGENT", "WHILEAI_SIMULATOR", "WHILEAI_JUDGE", "OPENAI_API_KEY",
                "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def shared_dir() -> Path:
    """The ../shared folder (product documents and fixtures); skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not present")
    return SHARED


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A tmp folder with Hugging Face datasets/hub set offline and their caches inside it."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_home" / "datasets"))
    return tmp_path


@pytest.fixture(scope="session")
def platform_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One ``whileai serve`` subprocess shared by the platform tests (skips without the extra)."""
    from platform_server import require_server_extra, start_server

    require_server_extra()
    server = start_server(tmp_path_factory.mktemp("platform"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def platform_key(platform_server: Any, monkeypatch: pytest.MonkeyPatch,
                 tmp_path: Path) -> str:
    """A fresh account on the shared server, used through WHILEAI_API_KEY / WHILEAI_BASE_URL
    (its logins and run folders under a temp WHILEAI_HOME)."""
    import secrets

    minted: str = platform_server.key(f"user-{secrets.token_hex(4)}")
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WHILEAI_BASE_URL", platform_server.url)
    monkeypatch.setenv("WHILEAI_API_KEY", minted)
    return minted


@pytest.fixture(scope="session")
def ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The ``ray`` module, connected to one local cluster (2 CPUs, files under a temp dir) for
    the whole session.

    Skipped under ``WHILEAI_PURE=1`` (the adapters call the same kernels the other tests cover
    on both backends; a second cluster start would only cost time) and without the ray extra.
    No usage report, no dashboard, loopback only; HOME and Ray's temp dir point into tmp.
    """
    if os.environ.get("WHILEAI_PURE") == "1":
        pytest.skip("Ray adapters run in the native pass only (the kernels are covered on both)")
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    root = tmp_path_factory.mktemp("ray")
    (root / "home").mkdir()
    patch = pytest.MonkeyPatch()
    # A loopback-only test cluster: no usage report, no auth token written under a home dir.
    for name, value in (("RAY_USAGE_STATS_ENABLED", "0"), ("RAY_TMPDIR", str(root)),
                        ("HOME", str(root / "home")), ("RAY_AUTH_MODE", "disabled"),
                        ("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")):
        patch.setenv(name, value)
    try:
        _start_ray(ray, root)
        from whileai.scale._ray import require_ray

        require_ray().data.DataContext.get_current().enable_progress_bars = False
        yield ray
    finally:
        with warnings.catch_warnings():  # Ray drops Popen handles of helpers it has stopped
            warnings.simplefilter("ignore", ResourceWarning)
            ray.shutdown()
            gc.collect()
        patch.undo()


def _start_ray(ray: Any, root: Path, attempts: int = 3) -> None:
    """``ray.init`` with retries: on a loaded machine the raylet can give up waiting (30 s) for
    its metrics agent; after the last attempt the Ray tests skip, saying so."""
    for attempt in range(attempts):
        try:
            with warnings.catch_warnings():  # Ray's start leaves /dev/null handles to the GC
                warnings.simplefilter("ignore", ResourceWarning)
                # Two malloc arenas for the whole job, as docs/scale.md advises: the span
                # tasks then share the job's workers instead of starting their own each test.
                ray.init(num_cpus=2, include_dashboard=False, _temp_dir=str(root),
                         _node_ip_address="127.0.0.1", log_to_driver=False,
                         configure_logging=False,
                         runtime_env={"env_vars": {"MALLOC_ARENA_MAX": "2"}})
                gc.collect()
            return
        except Exception as exc:  # Ray raises a bare Exception for a start-up time-out
            ray.shutdown()
            if attempt == attempts - 1:
                pytest.skip(f"a local Ray cluster did not start ({exc}); machine overloaded?")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the page tests (skips when Chromium is not installed)."""
    from browser import open_browser

    driver = open_browser()
    try:
        yield driver
    finally:
        driver.quit()
