"""The self-contained HTML report and its SVG charts (no server, no browser: see
test_dashboard_pages for the report opened in Chromium)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.cli import main
from whileai.rows.jsonl_write import write_jsonl
from whileai.simulations.report.svg import bars, histogram, line_chart


def graded_rows(n_asks: int = 6, k: int = 4) -> list[dict[str, Any]]:
    return [{"scenario_id": f"t{a}", "prompt": f"question {a}", "final_text": f"answer {r}",
             "reward": float((a + r) % 3 == 0), "markers": {"no_hedging": float(r % 2)}}
            for a in range(n_asks) for r in range(k)]


def test_charts_draw_one_mark_per_datum_with_its_numbers() -> None:
    svg = histogram([0.0, 0.05, 0.5, 1.0], title="t", bins=10)
    assert svg.count('class="mark"') == 10
    assert "<title>0-0.1: 2</title>" in svg
    assert "<title>0.9-1: 1</title>" in svg
    chart = line_chart({"reward": [(0, 0.1), (10, 0.5)], "kl": [(0, 0.0), (10, 0.02)]},
                       title="curves", markers=[(5, "alarm <b>")])
    assert chart.count('class="mark"') == 2
    assert chart.count('class="mark event"') == 1
    assert "alarm &lt;b&gt;" in chart  # text is escaped
    assert "no data yet" in line_chart({}, title="empty")
    hbars = bars([("contains:x", 0.6, None, None), ("tool:y", -0.1, -0.2, 0.0)], title="b",
                 floor=0.3)
    assert hbars.count('class="mark"') == 2
    assert hbars.count('class="floor"') == 2


def test_report_has_every_section_and_no_external_reference(tmp_path: Path) -> None:
    decon = zps.decontaminate([{"prompt": "a b c d e f g h i j"}], against=["x y z"])[1]
    html = zps.report_html(graded_rows(), tmp_path / "r.html", title="run <1>",
                           endorsed=["tool:lookup"], decontamination=decon)
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == html
    assert "<title>run &lt;1&gt;</title>" in html
    for section in ("Pass rates", "Pass rate per ask", "Judge status", "Hack scan", "Markers",
                    "Decontamination"):
        assert f"<h2>{section}</h2>" in html
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "<script" not in html
    assert html.count("<th scope=\"col\">") >= 10


def test_report_cli_writes_the_html_file(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    write_jsonl(tmp_path / "rows.jsonl", graded_rows())
    assert main(["report", str(tmp_path / "rows.jsonl"), "--html",
                 str(tmp_path / "r.html")]) == 0
    assert "<h2>Pass rate per ask</h2>" in (tmp_path / "r.html").read_text()
    assert "pass@1" in capsys.readouterr().out
