"""Refresh the viewer's screenshots in docs/images/: the row list, a conversation, compare, the
agreement (label) page and the hack scan, at 1280 px; the conversation on a phone and dark.

Simulates the seeded agent (``tests/viewer_rows.py``: faults, planted mistakes, judge
failures), writes a second run to compare against, starts ``whileai view A --compare B`` on a
free loopback port, types a few hand labels with the keyboard, and saves each page with
Debian's headless Chromium.

    .venv/bin/python tools/viewer_screenshots.py            # writes docs/images/viewer-*.png
"""

from __future__ import annotations

import argparse
import base64
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import open_browser, start_view, stop  # noqa: E402
from viewer_rows import viewer_rows  # noqa: E402


def _shot(driver: Any, url: str, path: Path, width: int, tallest: int = 2200) -> None:
    """The page at ``width`` CSS pixels, as tall as it is (up to ``tallest``)."""
    driver.set_window_size(width, 900)
    driver.get(url)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": min(tallest, int(height)),
                 "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    import whileai.simulations as zps

    rows = viewer_rows(12, 4)
    after = [r | {"reward": 1.0 - r["reward"]} if r.get("reward") is not None
             and r["rollout_index"] in (1, 2) else r for r in rows]
    folder = Path(tempfile.mkdtemp())
    zps.write_jsonl(folder / "before.jsonl", rows)
    zps.write_jsonl(folder / "after.jsonl", after)
    proc, url = start_view(folder / "before.jsonl", "--compare", str(folder / "after.jsonl"))
    driver = open_browser(1280, 900)
    try:
        base = url + "/datasets/local"
        for position, key in ((0, "y"), (1, "n"), (2, "y"), (3, "y"), (4, "n"), (5, "y")):
            driver.get(f"{base}/rows/{position}")
            driver.find_element(By.TAG_NAME, "body").send_keys(key)
            WebDriverWait(driver, 30).until(
                lambda d: d.find_element(By.ID, "label-state").text in ("pass", "fail"))
        seeded = next(i for i, r in enumerate(rows) if r["seeded"] and r["faults"]) if any(
            r["seeded"] and r["faults"] for r in rows) else next(
            i for i, r in enumerate(rows) if r["faults"])
        _shot(driver, f"{base}/rows", out / "viewer-rows.png", 1280)
        _shot(driver, f"{base}/rows/{seeded}", out / "viewer-conversation.png", 1280)
        _shot(driver, f"{base}/rows/{seeded}", out / "viewer-phone.png", 390, 1800)
        _shot(driver, url + "/compare?by=intent", out / "viewer-compare.png", 1280)
        _shot(driver, f"{base}/agreement", out / "viewer-agreement.png", 1280)
        _shot(driver, f"{base}/hacks", out / "viewer-hacks.png", 1280)
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        _shot(driver, f"{base}/rows/{seeded}", out / "viewer-dark.png", 1280, 1400)
    finally:
        driver.quit()
        stop(proc)


if __name__ == "__main__":
    main()
