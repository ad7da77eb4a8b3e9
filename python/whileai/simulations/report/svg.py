"""Small SVG charts made on the server or in a report file: no script, no external asset.

Every data mark carries ``class="mark"`` and a ``<title>`` with its numbers (a hover tip and what
a screen reader reads); every chart has a ``<title>`` and ``role="img"``. The numbers are also
printed in a table next to each chart by the pages that use them.

>>> svg = histogram([0.0, 0.5, 0.5, 1.0], bins=4, title="pass rate per ask")
>>> svg.count('class="mark"'), svg.startswith("<svg")
(4, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "bars", "histogram", "line_chart"]

# Colour-blind-safe (Okabe-Ito), all with >= 3:1 contrast on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
_W, _H, _PAD = 640, 240, 44


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _frame(title: str, body: list[str], width: int, height: int) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}" '
            f'class="chart"><title>{escape(title)}</title>'
            f'<rect width="{width}" height="{height}" fill="#fff"/>' + "".join(body) + "</svg>")


def _axes(x0: float, x1: float, y0: float, y1: float, width: int, height: int) -> list[str]:
    left, bottom = _PAD, height - _PAD + 16
    out = [f'<line x1="{left}" y1="{bottom}" x2="{width - 12}" y2="{bottom}" stroke="#555"/>',
           f'<line x1="{left}" y1="16" x2="{left}" y2="{bottom}" stroke="#555"/>']
    for frac in (0.0, 0.5, 1.0):
        y = bottom - frac * (bottom - 16)
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
                   f'fill="#222">{_fmt(y0 + frac * (y1 - y0))}</text>')
        x = left + frac * (width - 12 - left)
        out.append(f'<text x="{x:.1f}" y="{bottom + 14}" font-size="11" text-anchor="middle" '
                   f'fill="#222">{_fmt(x0 + frac * (x1 - x0))}</text>')
    return out


def line_chart(series: Mapping[str, Sequence[tuple[float, float]]], *, title: str,
               markers: Sequence[tuple[float, str]] = (), width: int = _W,
               height: int = _H) -> str:
    """Lines over steps (one per series) with dashed vertical markers (events) and a legend."""
    points = [p for s in series.values() for p in s if math.isfinite(p[1])]
    if not points:
        return _frame(title, [f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" '
                              'fill="#222">no data yet</text>'], width, height)
    x0, x1 = min(p[0] for p in points), max(p[0] for p in points)
    y0, y1 = min(p[1] for p in points), max(p[1] for p in points)
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    left, right, top, bottom = _PAD, width - 12, 16, height - _PAD + 16

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (right - left)

    def sy(y: float) -> float:
        return bottom - (y - y0) / (y1 - y0) * (bottom - top)

    body = _axes(x0, x1, y0, y1, width, height)
    for i, (name, pts) in enumerate(series.items()):
        colour = PALETTE[i % len(PALETTE)]
        good = [p for p in pts if math.isfinite(p[1])]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in good)
        body.append(f'<polyline class="mark" fill="none" stroke="{colour}" stroke-width="2" '
                    f'points="{path}"><title>{escape(name)}: {len(good)} points, last '
                    f'{_fmt(good[-1][1]) if good else "-"}</title></polyline>')
        body.append(f'<text x="{left + 8 + 110 * i}" y="12" font-size="12" fill="{colour}">'
                    f"&#9632; {escape(name)}</text>")
    for x, label in markers:
        if x0 <= x <= x1:
            body.append(f'<line class="mark event" x1="{sx(x):.1f}" y1="{top}" x2="{sx(x):.1f}" '
                        f'y2="{bottom}" stroke="#B00020" stroke-dasharray="4 3">'
                        f"<title>step {_fmt(x)}: {escape(label)}</title></line>")
    return _frame(title, body, width, height)


def histogram(values: Sequence[float], *, title: str, bins: int = 10, lo: float = 0.0,
              hi: float = 1.0, width: int = _W, height: int = _H) -> str:
    """Counts of ``values`` in ``bins`` equal bins over [lo, hi] (the last bin includes hi)."""
    counts = [0] * bins
    for v in values:
        if lo <= v <= hi:
            counts[min(bins - 1, int((v - lo) / (hi - lo) * bins))] += 1
    top = max(counts) or 1
    left, bottom = _PAD, height - _PAD + 16
    span = (width - 12 - left) / bins
    body = _axes(lo, hi, 0, top, width, height)
    for i, n in enumerate(counts):
        h = n / top * (bottom - 16)
        a, b = lo + i * (hi - lo) / bins, lo + (i + 1) * (hi - lo) / bins
        body.append(f'<rect class="mark" x="{left + i * span + 1:.1f}" y="{bottom - h:.1f}" '
                    f'width="{span - 2:.1f}" height="{h:.1f}" fill="{PALETTE[0]}">'
                    f"<title>{_fmt(a)}-{_fmt(b)}: {n}</title></rect>")
    return _frame(title, body, width, height)


def bars(items: Sequence[tuple[str, float, float | None, float | None]], *, title: str,
         floor: float | None = None, width: int = _W) -> str:
    """Horizontal bars ``(label, value, lo, hi)`` with interval whiskers, and an optional floor
    (drawn at +floor and -floor: the hack scan's noise floor ``tau``)."""
    height = 28 + 22 * max(1, len(items))
    label_w = 220
    values = [abs(v) for _, v, _, _ in items] + [abs(x) for _, _, lo, hi in items
                                                  for x in (lo, hi) if x is not None]
    scale = max([*values, abs(floor or 0.0), 1e-9])
    mid = label_w + (width - label_w - 12) / 2
    half = (width - label_w - 12) / 2

    def sx(v: float) -> float:
        return mid + v / scale * half

    body = [f'<line x1="{mid}" y1="8" x2="{mid}" y2="{height - 8}" stroke="#555"/>']
    if floor is not None:
        body.extend(f'<line class="floor" x1="{sx(f):.1f}" y1="8" x2="{sx(f):.1f}" '
                    f'y2="{height - 8}" stroke="#B00020" stroke-dasharray="4 3">'
                    f"<title>noise floor {_fmt(abs(f))}</title></line>" for f in (floor, -floor))
    for i, (label, value, lo, hi) in enumerate(items):
        y = 20 + 22 * i
        x_a, x_b = sorted((mid, sx(value)))
        colour = PALETTE[1] if floor is not None and abs(value) > floor else PALETTE[0]
        body.append(f'<text x="{label_w - 8}" y="{y + 4}" font-size="12" text-anchor="end" '
                    f'fill="#222">{escape(label[:34])}</text>')
        body.append(f'<rect class="mark" x="{x_a:.1f}" y="{y - 7}" width="{x_b - x_a:.1f}" '
                    f'height="14" fill="{colour}"><title>{escape(label)}: {_fmt(value)}'
                    + (f" [{_fmt(lo)}, {_fmt(hi)}]" if lo is not None and hi is not None
                       else "") + "</title></rect>")
        if lo is not None and hi is not None:
            body.append(f'<line x1="{sx(lo):.1f}" y1="{y}" x2="{sx(hi):.1f}" y2="{y}" '
                        'stroke="#222" stroke-width="1.5"/>')
    return _frame(title, body, width, height)
