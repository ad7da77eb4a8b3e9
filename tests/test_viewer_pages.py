"""The row viewer in a real headless Chromium: ``whileai view`` on a file, and the server's pages.

The rows come from the seeded agent (planted mistakes), with scheduled faults, a judge that
fails on some rows, and hand labels typed in the browser; a second file holds a script payload
in every field. Every page loads with no console error or failed request; a filter narrows the
list to the count the rows give; a label typed with the keyboard reaches ``judge_trust``;
no payload runs. Screenshots land in ``WHILEAI_ARTIFACTS`` (default ``build/screenshots``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import requests

import whileai.simulations as zps
from browser import chromium_or_skip, problems, start_view, stop
from platform_server import require_server_extra
from viewer_rows import PAYLOAD, payload_row, viewer_rows

require_server_extra()
chromium_or_skip()

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ARTIFACTS = Path(os.environ.get("WHILEAI_ARTIFACTS")
                 or Path(__file__).resolve().parents[1] / "build" / "screenshots")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return viewer_rows()


@pytest.fixture(scope="module")
def viewer(rows: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``whileai view`` on the rows, two of them (the last judged ones) labelled already, the
    labels agreeing with the judge."""
    from whileai.server.pages.labels import append_label, label_line

    path = tmp_path_factory.mktemp("view") / "rows.jsonl"
    zps.write_jsonl(path, rows)
    labels = path.with_name("rows.labels.jsonl")
    for row in [r for r in rows if r.get("reward") is not None][-2:]:
        append_label(labels, label_line(row, int(row["reward"]), annotator="earlier"))
    proc, url = start_view(path)
    yield {"url": url, "path": path, "labels": labels}
    stop(proc)


def _visit(driver: Any, url: str, shot: str) -> None:
    driver.get(url)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"view-{shot}.png"))


def _first(rows: list[dict[str, Any]], test: Any) -> int:
    return next(i for i, r in enumerate(rows) if test(r))


def test_whileai_view_prints_its_url_and_stays_on_loopback(viewer: dict[str, Any]) -> None:
    proc, url = start_view(viewer["path"])
    err = stop(proc)
    assert f"{url}/datasets/local/rows" in err
    assert url.startswith("http://127.0.0.1:")
    assert "24 rows of rows.jsonl" in err


@pytest.mark.parametrize("which", ["list", "fault", "seeded", "judge-error", "agreement",
                                   "hacks"])
def test_every_viewer_page_loads_clean(browser: Any, viewer: dict[str, Any],
                                       rows: list[dict[str, Any]], which: str) -> None:
    positions = {"fault": _first(rows, lambda r: r["faults"]),
                 "seeded": _first(rows, lambda r: r["seeded"]),
                 "judge-error": _first(rows, lambda r: r["judge_status"] == "error")}
    path = {"list": "/datasets/local/rows", "agreement": "/datasets/local/agreement",
            "hacks": "/datasets/local/hacks"}.get(which) or \
        f"/datasets/local/rows/{positions[which]}"
    problems(browser)
    _visit(browser, viewer["url"] + path, which)
    assert problems(browser) == []
    assert browser.title.endswith("· whileai")
    text = browser.find_element(By.TAG_NAME, "main").text
    if which == "fault":
        kind = rows[positions["fault"]]["faults"][0]["kind"]
        assert f"fault: {kind}" in text.lower()  # the call header is shown in capitals
        assert browser.find_elements(By.CSS_SELECTOR, ".turn.tool.faulted")
        flags = [f["flag"] for f in zps.trace_flags(rows[positions["fault"]])]
        assert flags  # the seeded agent claims success through the fault
        assert [b.text for b in browser.find_elements(
            By.CSS_SELECTOR, "#verdict .badge.fault[title]")] == flags
    if which == "seeded":
        assert "planted mistake" in text
        assert rows[positions["seeded"]]["seeded"][0] in text
        assert "The other rollouts of this task (2)" in text
    if which == "judge-error":
        assert "judge status error" in text
        assert "unjudged" in text
    if which == "list":
        assert len(browser.find_elements(By.CSS_SELECTOR, "#rows tbody tr")) == len(rows)
    if which == "hacks":
        scan = zps.hack_scan(rows, seed=0, progress=False)
        assert browser.find_element(By.ID, "regime").text == \
            f"regime: {scan['regime'].replace('_', ' ')}"
        assert browser.find_elements(By.CSS_SELECTOR, "svg.chart .mark")
        top = scan["features"][0]["name"]  # endorse the top feature and scan again
        browser.find_element(By.ID, "endorsed").send_keys(top)
        browser.find_element(By.CSS_SELECTOR, "form[action$='/hacks'] button").click()
        WebDriverWait(browser, 30).until(lambda d: "endorsed=" in d.current_url)
        endorsed = zps.hack_scan(rows, [top], seed=0, progress=False)
        assert browser.find_element(By.ID, "regime").text == \
            f"regime: {endorsed['regime'].replace('_', ' ')}"


def test_a_filter_narrows_the_list_to_the_expected_count(browser: Any, viewer: dict[str, Any],
                                                         rows: list[dict[str, Any]]) -> None:
    expected = sum(1 for r in rows if any(f["kind"] == "timeout" for f in r["faults"]))
    assert 0 < expected < len(rows)
    browser.get(viewer["url"] + "/datasets/local/rows")
    box = browser.find_element(By.CSS_SELECTOR, "input[name=fault][value=timeout]")
    count = box.find_element(By.XPATH, "../../span[@class='count']").text
    assert int(count) == expected
    box.click()  # the filters apply on change
    WebDriverWait(browser, 30).until(lambda d: "fault=timeout" in d.current_url)
    assert browser.find_element(By.ID, "total").get_attribute("data-total") == str(expected)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#rows tbody tr")) == expected
    # a second facet ANDs with the first; the search box narrows further
    failed = sum(1 for r in rows if r.get("reward") == 0 and
                 any(f["kind"] == "timeout" for f in r["faults"]))
    browser.get(viewer["url"] + "/datasets/local/rows?fault=timeout&outcome=fail")
    assert browser.find_element(By.ID, "total").get_attribute("data-total") == str(failed)
    word = rows[0]["final_text"].split()[-1].strip(".").lower()
    matching = [r for r in rows if word in (r["prompt"] + "\n" + r["final_text"]).lower()
                or any(word in str(m.get("content") or "").lower() for m in r["messages"]
                       if m["role"] in ("user", "assistant"))]
    found = len(matching)
    browser.get(viewer["url"] + f"/datasets/local/rows?q={word}")
    assert browser.find_element(By.ID, "total").get_attribute("data-total") == str(found)
    # a column header sorts; a second click reverses (unjudged rows last either way up)
    for descending in (False, True):
        browser.find_element(By.CSS_SELECTOR, "a[title='sort by reward']").click()
        WebDriverWait(browser, 30).until(
            lambda d, x=descending: ("desc=1" in d.current_url) == x and "sort=reward" in
            d.current_url)
        shown = [float(t) for td in browser.find_elements(
            By.CSS_SELECTOR, "#rows tbody td:nth-child(4)") if (t := td.text) != "-"]
        assert shown == sorted(shown, reverse=descending)
        assert len(shown) == sum(1 for r in matching if r.get("reward") is not None)
    assert problems(browser) == []


def test_a_keyboard_label_reaches_judge_trust(browser: Any, viewer: dict[str, Any],
                                              rows: list[dict[str, Any]]) -> None:
    passed = _first(rows, lambda r: r.get("reward") == 1.0)
    failed = _first(rows, lambda r: r.get("reward") == 0.0)
    for position, key, shown in ((passed, "n", "fail"), (failed, "n", "fail")):
        browser.get(viewer["url"] + f"/datasets/local/rows/{position}")
        browser.find_element(By.TAG_NAME, "body").send_keys(key)
        WebDriverWait(browser, 30).until(
            lambda d, s=shown: d.find_element(By.ID, "label-state").text == s)
    browser.find_element(By.TAG_NAME, "body").send_keys("j")  # next row
    WebDriverWait(browser, 30).until(lambda d: d.current_url.endswith(f"/rows/{failed + 1}"))
    assert problems(browser) == []
    labelled, report = zps.attach_labels(rows, str(viewer["labels"]))
    assert (report["matched"], report["unmatched"]) == (4, 0)  # two typed, two there before
    trust = zps.judge_trust(labelled)
    earlier = [r for r in rows if r.get("reward") is not None][-2:]
    agreeing_passes = sum(1 for r in earlier if r["reward"] == 1.0)
    assert trust["agreement"]["n"] == 4
    assert trust["agreement"]["confusion"] == {"tp": agreeing_passes, "fp": 1, "fn": 0,
                                               "tn": 1 + 2 - agreeing_passes}
    assert [q["index"] for q in trust["review_queue"]] == [passed]
    browser.get(viewer["url"] + "/datasets/local/agreement")
    assert browser.find_element(By.ID, "agreement-value").text == "0.75"
    assert browser.find_element(By.ID, "disagree").text == f"row {passed}"
    browser.get(viewer["url"] + "/datasets/local/rows?label=fail")
    assert browser.find_element(By.ID, "total").get_attribute("data-total") == str(
        2 + sum(1 for r in earlier if r["reward"] == 0.0))


def test_script_payloads_in_every_field_run_no_script(browser: Any,
                                                       tmp_path: Path) -> None:
    path = tmp_path / "payload.jsonl"
    zps.write_jsonl(path, [payload_row(), payload_row() | {"rollout_index": 1, "reward": 1.0}])
    other = tmp_path / "other.jsonl"
    zps.write_jsonl(other, [payload_row() | {"reward": 1.0}, payload_row() | {"rollout_index": 1}])
    proc, url = start_view(path, "--compare", str(other))
    quoted = requests.utils.quote(PAYLOAD)
    try:
        pages = ["/datasets/local/rows", "/datasets/local/rows/0", "/datasets/local/rows/1",
                 "/datasets/local/agreement", "/datasets/local/hacks",
                 f"/datasets/local/rows?q={quoted}", f"/datasets/local/rows?seeded={quoted}",
                 f"/datasets/local/rows?task={quoted}", "/compare?by=intent",
                 f"/compare/task?task={quoted}"]
        requests.post(url + "/datasets/local/rows/0/label",
                      json={"value": 1, "note": PAYLOAD}, timeout=10).raise_for_status()
        for page in pages:
            browser.get(url + page)
            assert browser.execute_script("return window.__xss === undefined")
            assert not browser.find_elements(By.CSS_SELECTOR, "main script, main img")
            if "agreement" not in page and "hacks" not in page:  # those print row fields
                assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in browser.page_source
        assert PAYLOAD in browser.find_element(By.TAG_NAME, "main").text  # shown as text
    finally:
        stop(proc)


def test_the_server_serves_the_same_row_pages(browser: Any, platform_server: Any,
                                              rows: list[dict[str, Any]],
                                              monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    key = platform_server.key("viewer")
    monkeypatch.setenv("WHILEAI_BASE_URL", platform_server.url)
    monkeypatch.setenv("WHILEAI_API_KEY", key)
    entry = zps.push_rows([*rows, payload_row()], "viewer-rows", gate=False)
    base = platform_server.url
    browser.get(base + "/signin")
    browser.delete_all_cookies()
    browser.get(base + "/signin")
    browser.find_element(By.ID, "key").send_keys(key)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda d: d.current_url.endswith("/datasets"))
    problems(browser)
    rows_url = f"{base}/datasets/{entry['datasetId']}/rows"
    _visit(browser, rows_url + "?fault=timeout", "server-list")
    expected = sum(1 for r in rows if any(f["kind"] == "timeout" for f in r["faults"]))
    assert browser.find_element(By.ID, "total").get_attribute("data-total") == str(expected)
    seeded = _first(rows, lambda r: r["seeded"])
    _visit(browser, f"{rows_url}/{seeded}", "server-row")
    assert "planted mistake" in browser.find_element(By.TAG_NAME, "main").text
    browser.find_element(By.TAG_NAME, "body").send_keys("y")
    WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "label-state").text
                                     == "pass")
    browser.get(f"{rows_url}/{len(rows)}")  # the payload row
    assert browser.execute_script("return window.__xss === undefined")
    browser.get(f"{base}/datasets/{entry['datasetId']}/agreement")
    assert browser.find_element(By.ID, "kappa").text == "-"  # one label: one class
    assert problems(browser) == []
    cookie = {"whileai_session": browser.get_cookie("whileai_session")["value"]}
    labels = requests.get(f"{base}/datasets/{entry['datasetId']}/labels.jsonl",
                          cookies=cookie, timeout=10)
    path = tmp_path / "labels.jsonl"
    path.write_bytes(labels.content)
    labelled, report = zps.attach_labels(rows, str(path))
    assert report["matched"] == 1
    assert (labelled[seeded]["gold_reward"], labelled[seeded]["label_source"]) == (1.0, "viewer")
    # a trace whose span name, attributes and messages hold the payload runs no script either
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": PAYLOAD, "kind": 3,
            "startTimeUnixNano": "1", "endTimeUnixNano": "2000001",
            "status": {"code": 2, "message": PAYLOAD}, "attributes": [
                {"key": "gen_ai.agent.name", "value": {"stringValue": PAYLOAD}},
                {"key": "gen_ai.request.model", "value": {"stringValue": PAYLOAD}},
                {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": PAYLOAD}]}])}}]}
    sent = requests.post(f"{base}/v1/traces", timeout=10,
                         json={"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]},
                         headers={"Authorization": f"Bearer {key}"})
    assert sent.ok, sent.text
    for page in ("/traces", f"/traces/{'ab' * 16}"):
        browser.get(base + page)
        assert browser.execute_script("return window.__xss === undefined")
        assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in browser.page_source
    assert problems(browser) == []
    # signed out, the row pages send the browser to sign in
    browser.delete_all_cookies()
    browser.get(rows_url)
    assert browser.current_url.endswith("/signin")


def _rates(rows: list[dict[str, Any]]) -> dict[str, float]:
    seen: dict[str, list[float]] = {}
    for r in rows:
        if r.get("reward") is not None:
            seen.setdefault(r["scenario_id"], []).append(float(r["reward"] >= 0.5))
    return {t: sum(v) / len(v) for t, v in seen.items()}


def test_compare_shows_the_paired_delta_and_the_flipped_tasks_side_by_side(
        browser: Any, viewer: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    after = [r | {"reward": 1.0 - r["reward"]} if r.get("reward") is not None
             and r["rollout_index"] != 0 else r for r in rows]
    other = viewer["path"].with_name("after.jsonl")
    zps.write_jsonl(other, after)
    before_rates, after_rates = _rates(rows), _rates(after)
    flipped = [t for t in before_rates if t in after_rates
               and (before_rates[t] >= 0.5) != (after_rates[t] >= 0.5)]
    assert flipped
    proc, url = start_view(viewer["path"], "--compare", str(other))
    try:
        problems(browser)
        _visit(browser, url + "/compare", "compare")
        assert problems(browser) == []
        table = browser.find_element(By.ID, "flipped")
        assert len(table.find_elements(By.CSS_SELECTOR, "tbody tr")) == len(flipped)
        expected = zps.compare_runs(rows, after, n_resamples=2000)
        cells = [td.text for td in browser.find_elements(
            By.XPATH, "//table[.//th='metric']//tr[td[1]='pass_at_1']/td")]
        assert cells[3] == f"{expected['delta']:.3g}"
        table.find_element(By.LINK_TEXT, "side by side").click()
        WebDriverWait(browser, 30).until(lambda d: "/compare/task" in d.current_url)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "view-compare-task.png"))
        assert len(browser.find_elements(By.CSS_SELECTOR, ".side section")) == 2
        assert problems(browser) == []
    finally:
        stop(proc)
