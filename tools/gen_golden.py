"""Write the golden vectors both test suites check: ``tests/golden/{primitives,embed}.json``.

The values come from the pure-Python reference kernels (docs/kernels.md). pytest checks both
backends against them and ``cargo test`` (rust/tests/golden.rs) checks the Rust kernels. Re-run
only when a kernel's definition changes on purpose (then bump the versioned embedder name):

    python tools/gen_golden.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from whileai._pure import rng  # noqa: E402
from whileai._pure._unicode_data import UNICODE_VERSION  # noqa: E402
from whileai._pure.embed import EMBEDDER_NAME, embed, embed_counts  # noqa: E402
from whileai._pure.hash import hash64  # noqa: E402
from whileai._pure.tokenize import tokenize  # noqa: E402

OUT = ROOT / "tests/golden"
MASK64 = (1 << 64) - 1

# Text that exercises every branch of the tokenizer: scripts with and without spaces, case
# mappings with no context rule (final sigma), digits in several scripts, marks, symbols, emoji.
TEXTS = [
    "",
    "   ",
    "Where's order #4412? It shipped on 2024-03-01.",
    "Привет, мир! Ёлка",
    "ΟΔΟΣ Σίσυφος ΣΊΣΥΦΟΣ",
    "注文を確認してください。注文番号は４４１２です",
    "สวัสดีครับ ราคา ๑๒๓ บาท",
    "한국어 텍스트 123",
    "مرحبا بالعالم ٣٤٥",
    "Straße İstanbul KELVIN: \u212a",
    "cafe\u0301 naïve résumé",
    "emoji 🎉🎉 party 🐍 snake",
    "a",
    "x1 1x 12 ١٢ 1٢ ½ ²",
    "tab\tnew\nline\r\nend",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "MiXeD CaSe WoRdS and_underscores-and-hyphens",
    "ᏣᎳᎩ ꭰ 𐐀𐐨 Ⓐⓑ",
    "𠀀𠀁 ideographs beyond the BMP",
    "the the the the the",
    # Evasions the normaliser and the confusable fold undo (docs/kernels.md, "Tokens").
    "con\u00adtami\u200bnation zero\u200dwidth \ufeffbom va\ufe0friation",
    "cafe\u0301 \uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \ufb01ne \u2460 x\u00b2",
    "d\u043eg \u0421\u041e\u0420Y \u039d\u039fTE \u03bdote \u0441\u043e\u0440 "
    "\u043f\u0440\u0438\u0432\u0435\u0442",
    "\u1100\u1161\u11a8 a\u0323\u0302 a\u0302\u0323 \u0b47\u0b3e",
]

SEEDS = [0, 1, 42, -1, -(2**63), 2**63, 2**64 - 1, 2**64, 2**70 + 12345, -(2**100) + 7]
UNITS = [0, 1, 7, -1, 2**64 + 3]
BOUNDS = [1, 2, 3, 10, 1000, 2**32 + 1, 2**63, 2**63 + 1, 2**64 - 1]
DIMS = [1, 2, 7, 64, 256, 1000]


def _seed_case(seed: int, unit: int) -> dict[str, Any]:
    # JSON readers differ on integers beyond 64 bits, so the raw seed travels as a string and
    # the reduced value (what the kernel uses) as a u64.
    return {
        "seed": str(seed),
        "seed_u64": seed & MASK64,
        "unit": str(unit),
        "unit_u64": unit & MASK64,
    }


def _error(call: Any) -> dict[str, str]:
    try:
        call()
    except (TypeError, ValueError) as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    raise AssertionError("expected an error")


def primitives() -> dict[str, Any]:
    streams, floats, bounded = [], [], []
    for i, seed in enumerate(SEEDS):
        unit = UNITS[i % len(UNITS)]
        case = _seed_case(seed, unit)
        streams.append({**case, "values": rng.splitmix64_stream(seed, unit, 6)})
        floats.append({**case, "values": rng.uniform_floats(seed, unit, 6)})
    for i, bound in enumerate(BOUNDS):
        seed, unit = SEEDS[i % len(SEEDS)], UNITS[i % len(UNITS)]
        values = rng.bounded_ints(seed, unit, bound, 8)
        bounded.append({**_seed_case(seed, unit), "bound": bound, "values": values})
    hashes = [{"text": t, "hash": hash64(t)} for t in [*TEXTS, "<num>", "12345678", "123456789"]]
    tokens = [
        {"text": t, "numbers": numbers, "tokens": tokenize(t, numbers)}
        for t in TEXTS
        for numbers in (False, True)
    ]
    # Errors: (function, positional args); JSON can hold floats, bools and null as bad args.
    bad_calls: list[tuple[str, list[Any]]] = [
        ("splitmix64_stream", [1.5, 0, 1]),
        ("splitmix64_stream", [True, 0, 1]),
        ("splitmix64_stream", [None, 0, 1]),
        ("uniform_floats", [0, 2.0, 1]),
        ("uniform_floats", [0, 0, -1]),
        ("uniform_floats", [0, 0, 1.0]),
        ("bounded_ints", [0, 0, 0, 1]),
        ("bounded_ints", [0, 0, -5, 1]),
        ("bounded_ints", [0, 0, 2**64, 1]),
        ("bounded_ints", [0, 0, 3.0, 1]),
        ("bounded_ints", [0.5, 0, 0, 1]),
        ("hash64", [3]),
        ("tokenize", [None]),
        ("embed", [["ok", 3], 8]),
        ("embed", ["not a list", 8]),
        ("embed", [["ok"], 0]),
        ("embed", [["ok"], -3]),
        ("embed", [["ok"], 8.0]),
        ("embed", [["ok"], True]),
        ("embed_counts", [["ok", None], 0]),
        ("embed_counts", [5, 8]),
        ("embed_counts", [["ok"], 0]),
    ]
    functions: dict[str, Any] = {
        "splitmix64_stream": rng.splitmix64_stream,
        "uniform_floats": rng.uniform_floats,
        "bounded_ints": rng.bounded_ints,
        "hash64": hash64,
        "tokenize": tokenize,
        "embed": embed,
        "embed_counts": embed_counts,
    }
    errors = [
        {"function": name, "args": args, **_error(lambda f=functions[name], a=args: f(*a))}
        for name, args in bad_calls
    ]
    return {
        "unicode_version": UNICODE_VERSION,
        "streams": streams,
        "floats": floats,
        "bounded": bounded,
        "hashes": hashes,
        "tokens": tokens,
        "errors": errors,
    }


def embeddings() -> dict[str, Any]:
    cases = []
    for dim in DIMS:
        counts = embed_counts(TEXTS, dim)
        vectors = embed(TEXTS, dim)
        cases.append({"dim": dim, "counts": counts.tolist(), "vectors": vectors.tolist()})
    cases.append({"dim": 16, "texts": [], "counts": [], "vectors": []})
    return {"name": EMBEDDER_NAME, "texts": TEXTS, "cases": cases}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    # The embedding cases are long flat lists: one line per case keeps the file small.
    for name, data, indent in (("primitives", primitives(), 1), ("embed", embeddings(), None)):
        path = OUT / f"{name}.json"
        text = json.dumps(data, ensure_ascii=False, indent=indent)
        path.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
