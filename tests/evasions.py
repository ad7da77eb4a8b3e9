"""Text a copier might disguise: ``PLAIN`` and ``EVASIONS``, each ``(name, text)`` being PLAIN
with one evasion (invisible characters, lookalike letters, full-width forms, ligatures). The
normaliser's kernel tests and decontaminate's tests share them."""

from __future__ import annotations

__all__ = ["EVASIONS", "PLAIN"]

PLAIN = "please confirm the contamination report for the blue kettle order today"
# (name, text): each is PLAIN with one evasion a copier might use.
EVASIONS = [
    ("zero-width space", PLAIN.replace("contamination", "conta\u200bmination")),
    ("soft hyphen", PLAIN.replace("contamination", "contami\u00adnation")),
    ("zero-width joiners", PLAIN.replace("kettle", "ket\u200dtle\u200c")),
    ("word joiner and BOM", "\ufeff" + PLAIN.replace("blue", "bl\u2060ue")),
    ("variation selector", PLAIN.replace("order", "or\ufe0fder")),
    ("full-width letters", PLAIN.replace("kettle", "\uff4b\uff45\uff54\uff54\uff4c\uff45")),
    ("Cyrillic o", PLAIN.replace("order", "\u043erder").replace("report", "rep\u043ert")),
    ("Cyrillic a, e, c, p", PLAIN.replace("please", "\u0440l\u0435\u0430s\u0435")),
    ("Greek capitals", PLAIN.replace("the blue", "\u03a4\u0397\u0395 blue")),
    ("ligature", PLAIN.replace("confirm", "con\ufb01rm")),
    ("non-breaking spaces", PLAIN.replace(" ", "\u00a0")),
]
