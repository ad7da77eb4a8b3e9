"""The platform's pages and the HTML report in a real headless Chromium (Debian's, via Selenium).

A seeded server (datasets with lineage, a published card, a run with an alarm, scored traces)
is browsed page by page: each loads with no console error and no failed request, its charts have
drawn marks, and a screenshot lands in ``WHILEAI_ARTIFACTS`` (default ``build/screenshots``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import requests

import whileai.simulations as zps
from browser import chromium_or_skip
from browser import problems as _problems
from platform_server import require_server_extra

require_server_extra()
chromium_or_skip()

from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ARTIFACTS = Path(os.environ.get("WHILEAI_ARTIFACTS")
                 or Path(__file__).resolve().parents[1] / "build" / "screenshots")


def graded_rows(n_asks: int = 6, k: int = 4) -> list[dict[str, Any]]:
    return [{"scenario_id": f"t{a}", "prompt": f"question {a}", "final_text": f"answer {r}",
             "reward": float((a + r) % 3 == 0)} for a in range(n_asks) for r in range(k)]


@pytest.fixture(scope="module")
def seeded(platform_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    key = platform_server.key("pages")
    url = platform_server.url
    env = {"WHILEAI_BASE_URL": url, "WHILEAI_API_KEY": key,
           "WHILEAI_HOME": str(tmp_path_factory.mktemp("home"))}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        parent = zps.push_rows(graded_rows(), "refunds-v1", agent="support-bot")
        child = zps.push_rows(graded_rows(8), "refunds-v2", agent="support-bot",
                              parent=parent["datasetId"])
        zps.publish(child["datasetId"], agent="support-bot", description="graded refunds")
        with zps.training_run("grpo-demo", total_steps=40) as run:
            assert run.sender is not None
            run.sender.interval = 0.05
            for step in range(40):
                run.log(step, reward=step / 40, kl=0.002 * step, loss=1 - step / 50)
            run.alarm("feature", step=30, message="the reward pays for contains:guaranteed",
                      evidence={"rho": 0.6}, stop=False)
            run.note("lowered beta")
            run.delta(graded_rows(), graded_rows(), n_resamples=50)
        auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        spans = [{"traceId": f"{i:032x}", "spanId": f"{i + 1:016x}", "name": "chat m",
                  "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [
                      {"key": "gen_ai.agent.name", "value": {"stringValue": "support-bot"}},
                      {"key": "whileai.scenario_id", "value": {"stringValue": f"s{i % 2}"}},
                      {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                          [{"role": "user", "parts": [{"type": "text",
                                                       "content": f"where is {i}"}]}])}}]}
                 for i in range(1, 9)]
        body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
        assert requests.post(f"{url}/v1/traces", json=body, headers=auth, timeout=10).ok
        zps.send_score(scores=[{"traceId": s["traceId"], "value": float(i % 4 == 0)}
                               for i, s in enumerate(spans)])
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {"url": url, "key": key, "dataset": child["datasetId"], "run": run.id,
            "trace": spans[0]["traceId"]}


@pytest.fixture
def signed_in(browser: Any, seeded: dict[str, Any]) -> Any:
    """The browser with a session cookie (signs in through the form when it has none)."""
    from selenium.webdriver.common.by import By

    browser.get(seeded["url"] + "/signin")
    if browser.get_cookie("whileai_session") is None:
        browser.find_element(By.ID, "key").send_keys(seeded["key"])
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(browser, 30).until(lambda d: d.get_cookie("whileai_session") is not None)
    _problems(browser)
    return browser


def _visit(driver: Any, url: str, shot: str) -> None:
    driver.get(url)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{shot}.png"))


def test_sign_in_refuses_a_wrong_key_then_admits_the_right_one(browser: Any,
                                                                seeded: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    browser.get(seeded["url"] + "/signin")
    browser.delete_all_cookies()
    _visit(browser, seeded["url"] + "/datasets", "redirect-to-signin")
    assert browser.current_url.endswith("/signin")
    browser.find_element(By.ID, "key").send_keys("wrong-key")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
    assert "That key was refused." in browser.find_element(By.CSS_SELECTOR,
                                                           "[role=alert]").text
    _problems(browser)  # the 401 of the refused sign-in is the expected answer
    browser.find_element(By.ID, "key").send_keys(seeded["key"])
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda d: d.current_url.endswith("/datasets"))
    assert browser.title == "Datasets · whileai"
    assert _problems(browser) == []


@pytest.mark.parametrize(("path", "title", "charts"), [
    ("/datasets", "Datasets · whileai", 0),
    ("/datasets/{dataset}", "refunds-v2 · whileai", 1),
    ("/traces", "Traces · whileai", 0),
    ("/runs", "Runs · whileai", 0),
    ("/runs/{run}", "grpo-demo · whileai", 3),
    ("/catalog", "Catalog · whileai", 0),
    ("/traces/{trace}", "Trace 000000000000 · whileai", 0),
    ("/datasets/{dataset}/rows", "Rows · refunds-v2 · whileai", 0),
], ids=["datasets", "dataset", "traces", "runs", "run", "catalog", "trace", "rows"])
def test_every_page_loads_clean(signed_in: Any, seeded: dict[str, Any], path: str, title: str,
                                charts: int) -> None:
    from selenium.webdriver.common.by import By

    browser = signed_in
    url = seeded["url"] + path.format(**seeded)
    _visit(browser, url, path.strip("/").replace("/", "-").replace("{", "").replace("}", ""))
    assert browser.title == title
    assert _problems(browser) == []
    assert browser.find_elements(By.CSS_SELECTOR, "table th")  # headers on every table
    marks = browser.find_elements(By.CSS_SELECTOR, "svg.chart .mark")
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart")) >= charts
    if charts:
        assert marks, "charts drew no marks"


def test_page_contents(signed_in: Any, seeded: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    browser = signed_in
    browser.get(seeded["url"] + "/traces")
    lead = browser.find_element(By.CSS_SELECTOR, "p.big").text
    assert lead == "1 prompt is worth training on"  # s0 passes half of its runs, s1 none
    browser.get(seeded["url"] + f"/runs/{seeded['run']}")
    events = browser.find_elements(By.CSS_SELECTOR, "svg.chart .event")
    assert events, "the monitor alarm is not marked on the charts"
    assert "About the same" in browser.find_element(By.CSS_SELECTOR, "p.big").text
    browser.get(seeded["url"] + f"/datasets/{seeded['dataset']}")
    assert "refunds-v1" in browser.page_source  # lineage: the parent is linked
    browser.get(seeded["url"] + f"/traces/{seeded['trace']}")
    assert [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#spans td:first-child")
            ] == ["chat m"]
    assert "where is 1" in browser.find_element(By.TAG_NAME, "main").text  # the conversation
    # s1 runs on traces 1, 3, 5, 7; traces 1 and 5 scored 1: half pass, inside the rl band
    assert "4 runs, 4 scored, 2 passed · in the rl, sft cuts" in browser.find_element(
        By.ID, "cut").text


def test_the_html_report_opens_from_file_with_no_network(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    path = tmp_path / "report.html"
    zps.report_html(graded_rows(8, 6), path, title="refund run")
    browser.get_log("performance")
    _visit(browser, path.as_uri(), "report")
    requested = [json.loads(e["message"])["message"]["params"].get("request", {}).get("url")
                 for e in browser.get_log("performance")
                 if json.loads(e["message"])["message"]["method"] == "Network.requestWillBeSent"]
    assert all(u.startswith("file://") for u in requested if u)
    assert browser.title == "refund run"
    assert browser.find_elements(By.CSS_SELECTOR, "svg.chart .mark")

