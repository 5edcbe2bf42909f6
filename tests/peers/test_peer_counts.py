"""docs/parity.md's table of the ported peer cases ("Parity with the peers'
own tests") says how many pass and how many are marked convention, per peer and
feature: checked here against the cases themselves, so the table cannot drift."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from peer_support import counts

HERE = Path(__file__).resolve().parent
PARITY = HERE.parent.parent / "docs" / "parity.md"
ROW = re.compile(
    r"^\| (?P<peer>[^|]+?) \| \[(?P<feature>[^\]]+)\]\(\.\./tests/peers/(?P<file>test_\w+)\.py\) "
    r"\| (?P<passed>\d+) \| (?P<conv>\d+) \| (?P<total>\d+) \|$"
)
TOTAL = re.compile(
    r"^\| \*\*(?P<peer>[^*]+)\*\* \| \*\*all\*\* \| \*\*(?P<passed>\d+)\*\* "
    r"\| \*\*(?P<conv>\d+)\*\* \| \*\*(?P<total>\d+)\*\* \|$"
)


def test_parity_page_counts_match_the_cases():
    rows = [m for m in map(ROW.match, PARITY.read_text().splitlines()) if m]
    totals = {m["peer"]: m for m in map(TOTAL.match, PARITY.read_text().splitlines()) if m}
    files = sorted(p.stem for p in HERE.glob("test_*_*.py") if p.stem != "test_peer_counts")
    assert sorted(r["file"] for r in rows) == files  # every ported file has its row
    summed: dict[str, list[int]] = {}
    for r in rows:
        cases = importlib.import_module(r["file"]).CASES
        want = counts(cases)
        assert (int(r["passed"]), int(r["conv"]), int(r["total"])) == want, r["file"]
        s = summed.setdefault(r["peer"], [0, 0, 0])
        for i in range(3):
            s[i] += want[i]
    assert set(totals) == set(summed)
    for peer, s in summed.items():
        t = totals[peer]
        assert [int(t["passed"]), int(t["conv"]), int(t["total"])] == s, peer
    assert sum(s[2] for s in summed.values()) >= 150


def table() -> str:
    """docs/parity.md's counts table, from the cases:
    ``PYTHONPATH=tests:tests/peers .venv/bin/python tests/peers/test_peer_counts.py``."""
    out: list[str] = []
    summed: dict[str, list[int]] = {}
    for line in PARITY.read_text().splitlines():
        m = ROW.match(line)
        if not m:
            continue
        peer = m["peer"]
        if out and peer not in summed:
            out.append(_total(out, summed))
        want = counts(importlib.import_module(m["file"]).CASES)
        s = summed.setdefault(peer, [0, 0, 0])
        for i in range(3):
            s[i] += want[i]
        feature, file = m["feature"], m["file"]
        out.append(
            f"| {peer} | [{feature}](../tests/peers/{file}.py) | {want[0]} | {want[1]} | {want[2]} |"
        )
    out.append(_total(out, summed))
    return "\n".join(out)


def _total(out: list[str], summed: dict[str, list[int]]) -> str:
    peer = list(summed)[-1]
    p, c, t = summed[peer]
    return f"| **{peer}** | **all** | **{p}** | **{c}** | **{t}** |"


if __name__ == "__main__":
    print(table())
