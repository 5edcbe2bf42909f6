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


BEGIN = "<!-- generated: PYTHONPATH=tests:tests/peers .venv/bin/python tests/peers/test_peer_counts.py -->"
END = "<!-- end of generated -->"


def _modules() -> list[tuple[str, str, str]]:
    """(peer, feature, module) of each row of the page's table, in its order."""
    return [(m["peer"], m["feature"], m["file"]) for m in map(ROW.match, _page_lines()) if m]


def _page_lines() -> list[str]:
    return PARITY.read_text().splitlines()


def table() -> str:
    """The counts table, from the cases."""
    out: list[str] = ["| Peer | Feature | Passed | Convention | Total |", "|---|---|---|---|---|"]
    summed: dict[str, list[int]] = {}
    for peer, feature, file in _modules():
        if summed and peer not in summed:
            out.append(_total(summed))
        want = counts(importlib.import_module(file).CASES)
        s = summed.setdefault(peer, [0, 0, 0])
        for i in range(3):
            s[i] += want[i]
        link = f"[{feature}](../tests/peers/{file}.py)"
        out.append(f"| {peer} | {link} | {want[0]} | {want[1]} | {want[2]} |")
    out.append(_total(summed))
    return "\n".join(out)


def _total(summed: dict[str, list[int]]) -> str:
    peer = list(summed)[-1]
    p, c, t = summed[peer]
    return f"| **{peer}** | **all** | **{p}** | **{c}** | **{t}** |"


def conventions() -> str:
    """Every convention's reason, per file, with how many cases it marks."""
    out = []
    for peer, feature, file in _modules():
        reasons: dict[str, int] = {}
        for c in importlib.import_module(file).CASES:
            if c.get("convention"):
                reasons[c["convention"]] = reasons.get(c["convention"], 0) + 1
        if reasons:
            out.append(f"- **{peer}, {feature}**")
            out += [f"  - ({n}) {_plain(r)}" for r, n in reasons.items()]
    return "\n".join(out)


def _plain(text: str) -> str:
    """``text`` shown as written in markdown: its markup characters escaped."""
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def not_ported() -> str:
    """What each file says of the peer's tests it does not port, and why."""
    out = []
    for peer, feature, file in _modules():
        doc = " ".join((importlib.import_module(file).__doc__ or "").split())
        if "Not ported" in doc:
            text = doc[doc.index("Not ported") :]
        else:
            every = re.search(r"All of the peer's tests are ported[^.]*\.", doc)
            text = every.group(0) if every else "(the module does not say)"
        out.append(f"- **{peer}, {feature}**: {text}")
    return "\n".join(out)


def generated() -> str:
    return "\n\n".join(
        [
            BEGIN,
            table(),
            "### Conventions (each marks one assertion, with how many cases)",
            conventions(),
            "### Not ported, per file (from each module's docstring)",
            not_ported(),
            END,
        ]
    )


def test_parity_page_holds_what_the_cases_say():
    text = PARITY.read_text()
    assert BEGIN in text and END in text
    block = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert block == generated(), "run the command in docs/parity.md and paste its output"


if __name__ == "__main__":
    print(generated())
