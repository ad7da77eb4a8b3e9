"""Decontamination: the n-gram kernel and the rules of decontaminate()."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from types import ModuleType

import pytest

from evasions import EVASIONS, PLAIN
from whileai.errors import ConfigError
from whileai.simulations.clean.decontam import decontaminate, format_decontamination
from whileai.simulations.clean.decontam_index import build_eval_index

EVAL_Q = (
    "A customer bought a blue kettle on March third and it arrived with a cracked lid; "
    "they want to know whether a replacement lid can ship before the weekend"
)


def test_index_scan_covered_words_and_ties(backend: ModuleType) -> None:
    index = backend.NgramIndex(["a b c d e f", "x a b c y", "a b c d e f"], 3)
    best, covered, total, shared = index.scan(["a b c d z", "q r", "a b c"])
    # text 0: eval 0 shares "a b c", "b c d" (4 words); eval 1 shares "a b c" (3 words)
    assert list(best) == [0, -1, 0]
    assert list(covered) == [4, 0, 3]
    assert list(total) == [5, 2, 3]
    assert shared[0] == ["a", "b", "c"]
    assert shared[1] == []
    assert list(index.exact(["A, B c d E f!", "a b"])) == [0, -1]


def test_index_pickles_and_round_trips_bytes(backend: ModuleType) -> None:
    texts = [EVAL_Q, "другой вопрос о заказе номер четыре", "注文を確認してください"]
    index = backend.NgramIndex(texts, 4)
    probe = [EVAL_Q.upper(), "вопрос о заказе номер четыре сегодня", "注文を確認"]
    again = pickle.loads(pickle.dumps(index))
    assert again.scan(probe) == index.scan(probe)
    assert backend.NgramIndex.from_bytes(index.to_bytes()).scan(probe) == index.scan(probe)
    assert again.n == 4
    assert again.size == 3
    with pytest.raises(ValueError, match="bad header"):
        backend.NgramIndex.from_bytes(b"nonsense")


def test_index_rejects_bad_n(backend: ModuleType) -> None:
    with pytest.raises(ValueError, match="n must be at least 1, got 0"):
        backend.NgramIndex(["a"], 0)
    with pytest.raises(TypeError, match=r"texts\[1\] must be str, got int"):
        backend.NgramIndex(["a", 3], 2)


def test_verbatim_near_and_clean() -> None:
    near = EVAL_Q.replace("they want", "the buyer wants")  # most 8-grams survive
    train = [
        {"prompt": EVAL_Q.upper() + " !!"},
        {"prompt": near},
        {"prompt": "My package never arrived and I would like a refund for the whole order today"},
    ]
    clean, report = decontaminate(train, against=[{"prompt": EVAL_Q}])
    assert [r["prompt"] for r in clean] == [train[2]["prompt"]]
    assert report["by_rule"]["verbatim"] == 1
    assert report["by_rule"]["near"] == 1
    assert report["by_field"]["prompt"] == {"verbatim": 1, "near": 1, "semantic": 0}
    near_ex = next(e for e in report["examples"] if e["rule"] == "near")
    assert near_ex["index"] == 1
    assert near_ex["overlap"] >= 0.8
    assert len(near_ex["ngram"].split()) == 8
    assert "dropped" in format_decontamination(report)


def test_shared_template_sentence_is_not_enough() -> None:
    # One 8-gram sentence in common (a template) does not make a row a copy at overlap 0.8...
    template = "thank you for contacting the support desk of our store"
    eval_row = {"prompt": template + " where is my order 4412"}
    train = [{"prompt": template + " I want to cancel my subscription before it renews next month"}]
    clean, report = decontaminate(train, against=[eval_row])
    assert len(clean) == 1
    assert report["dropped"] == 0
    # ...but overlap=0 means any shared n-gram counts, and overlap is a threshold in between.
    _, any_report = decontaminate(train, against=[eval_row], overlap=0.0)
    assert any_report["by_rule"]["near"] == 1
    share = 10 / 21  # the template covers 10 of the row's 21 words
    assert decontaminate(train, against=[eval_row], overlap=share)[1]["dropped"] == 1
    assert decontaminate(train, against=[eval_row], overlap=share + 0.01)[1]["dropped"] == 0


def test_short_prompts_match_verbatim_only() -> None:
    train = [{"prompt": "Cancel my order"}, {"prompt": "cancel my order now please"}]
    clean, report = decontaminate(train, against=["cancel my order", "cancel my order now"])
    assert [r["prompt"] for r in clean] == ["cancel my order now please"]
    assert report["by_rule"]["verbatim"] == 1
    assert report["by_rule"]["near"] == 0
    assert report["short_texts"] == 2
    assert any("verbatim copies only" in n for n in report["notes"])


def test_same_task_rule_fires_first() -> None:
    train = [
        {"scenario_id": "sc-0000000001", "prompt": "totally different words here"},
        {"task_id": "t9", "prompt": "other"},
        {"scenario_id": "sc-0000000002", "prompt": "fine"},
    ]
    eval_rows = [{"scenario_id": "sc-0000000001", "prompt": "x"}, {"task_id": "t9", "prompt": "y"}]
    clean, report = decontaminate(train, against=[eval_rows])
    assert [r.get("scenario_id") for r in clean] == ["sc-0000000002"]
    assert report["by_rule"]["same_task"] == 2


def test_non_english_scripts() -> None:
    ru = "Покупатель заказал синий чайник третьего марта и получил его с треснувшей крышкой сегодня"
    ja = "青いやかんを三月三日に注文しましたが蓋が割れて届きました交換できますか"
    train = [
        {"prompt": ru.replace("сегодня", "вчера")},
        {"prompt": ja.replace("交換できますか", "返金できますか")},
        {"prompt": "Ένας πελάτης θέλει επιστροφή χρημάτων για την παραγγελία του"},
    ]
    clean, report = decontaminate(train, against=[[{"prompt": ru}, {"prompt": ja}]])
    assert len(clean) == 1
    assert clean[0] is train[2]
    assert report["by_rule"]["near"] == 2


def test_replies_check_answers_not_eval_replies() -> None:
    answer = "Your replacement lid ships on Friday and arrives before the weekend with free postage"
    eval_rows = [
        {"prompt": "q1", "privileged": {"reference": answer}},
        {"prompt": "q2", "final_text": "an eval reply that a train reply copies word for word ok"},
    ]
    train = [
        {"prompt": "a", "final_text": answer},
        {"prompt": "b", "final_text": "an eval reply that a train reply copies word for word ok"},
    ]
    clean, report = decontaminate(train, against=eval_rows, fields=("prompt", "final_text"))
    assert [r["prompt"] for r in clean] == ["b"]
    assert report["by_field"]["final_text"]["verbatim"] == 1
    assert report["eval"]["answers"] == 1


def test_streams_from_jsonl_to_output_with_a_reusable_index(tmp_path: Path) -> None:
    train_path = tmp_path / "train.jsonl"
    rows = [{"prompt": f"question {i} about order {i * 7} and its delivery"} for i in range(50)]
    rows[17] = {"prompt": EVAL_Q}
    train_path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    index = pickle.loads(pickle.dumps(build_eval_index([{"prompt": EVAL_Q}])))
    out = tmp_path / "clean.jsonl"
    clean, report = decontaminate(iter([]), against=index)
    assert clean == []
    assert report["rows"] == 0
    clean, report = decontaminate(str(train_path), against=index, output=out, chunk_size=8)
    assert clean == []
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(written) == 49
    assert report["kept"] == 49
    assert report["rows"] == 50
    assert report["examples"][0]["index"] == 17
    with pytest.raises(ConfigError, match="n=8 but decontaminate got n=5"):
        decontaminate(rows, against=index, n=5)


def test_semantic_rule_only_with_embedder_and_says_it_is_uncalibrated() -> None:
    eval_rows = [{"prompt": "kettle lid cracked replacement shipping weekend"}]
    train = [{"prompt": "replacement shipping weekend kettle lid cracked"}]
    assert decontaminate(train, against=eval_rows)[1]["dropped"] == 0
    clean, report = decontaminate(train, against=eval_rows, embedder="hash", similarity=0.5)
    assert clean == []
    assert report["by_rule"]["semantic"] == 1
    assert any("not calibrated" in n for n in report["notes"])


def test_bad_knobs() -> None:
    with pytest.raises(ConfigError, match="overlap"):
        decontaminate([], against=[], overlap=1.5)
    with pytest.raises(TypeError, match="unexpected keyword"):
        decontaminate([], against=[], ngram=8)  # type: ignore[call-arg]


def _scan_in_worker(index: object, texts: list[str]) -> list[int]:
    return list(index.scan(texts)[0])  # type: ignore[attr-defined]


def test_eval_index_ships_to_a_worker_process() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    index = build_eval_index([{"prompt": EVAL_Q}])
    probe = [EVAL_Q, "nothing in common with the eval set at all here ok"]
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        got = pool.submit(_scan_in_worker, index.prompts, probe).result(timeout=120)
    assert got == [0, -1]
    clean, _ = decontaminate([{"prompt": p} for p in probe], against=index)
    assert [r["prompt"] for r in clean] == [probe[1]]


@pytest.mark.parametrize(("name", "text"), EVASIONS)
def test_decontaminate_drops_each_evasion_as_verbatim(name: str, text: str) -> None:
    clean, report = decontaminate(
        [{"prompt": text}, {"prompt": "an unrelated question about refunds"}],
        against=[{"prompt": PLAIN}],
    )
    assert report["by_rule"]["verbatim"] == 1, name
    assert [r["prompt"] for r in clean] == ["an unrelated question about refunds"]


def test_decontaminate_catches_a_near_copy_with_evasions_in_several_words() -> None:
    text = PLAIN.replace("contamination", "conta\u200bmination").replace("order", "\u043erder")
    _, report = decontaminate([{"prompt": text + " again"}], against=[PLAIN])
    assert report["by_rule"]["near"] == 1
