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
