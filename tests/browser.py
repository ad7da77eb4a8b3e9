"""Debian's headless Chromium through Selenium for the page tests, and what a page got wrong.

``chromium_or_skip`` skips the calling module when selenium, chromium or chromedriver is
missing (``make test`` installs them); ``open_browser`` starts one; ``problems`` returns the
console errors and failed requests since the last call; ``start_view`` runs ``whileai view``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from platform_server import free_port


def chromium_or_skip() -> tuple[str, str]:
    """The chromium and chromedriver paths, or skip the calling module."""
    pytest.importorskip("selenium.webdriver")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make test "
                    "installs them)", allow_module_level=True)
    return chromium, driver


def open_browser(width: int = 1200, height: int = 1600) -> Any:
    """A headless Chromium that logs console messages and network events."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = chromium_or_skip()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}", "--no-first-run", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    return driver


def problems(driver: Any) -> list[str]:
    """Console errors and failed requests since the last call."""
    out = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            out.append(f"failed request: {params.get('errorText')}")
        if message["method"] == "Network.responseReceived":
            status = params["response"]["status"]
            if status >= 400:
                out.append(f"HTTP {status} for {params['response']['url']}")
    return out


def start_view(path: Path, *flags: str) -> tuple[subprocess.Popen[bytes], str]:
    """``whileai view PATH --no-browser`` on a free port; its base URL once it answers."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "whileai", "view", str(path), "--no-browser",
                             "--port", str(port), *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"whileai view exited: {proc.stderr.read().decode()}"
                                 if proc.stderr else "whileai view exited")
        try:
            if requests.get(url + "/datasets/local/rows", timeout=2).ok:
                return proc, url
        except requests.ConnectionError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("whileai view did not answer within 60 s")


def stop(proc: subprocess.Popen[bytes]) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    return err.decode()
