"""A rare exact word is never buried (issues 48 and 39): a word found in few
sections, asked alone or inside a plain question, ranks its section near the
top in hybrid search, however many sections the dense side finds closer in
meaning. Real index, real model; each folder is built once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdseek.index.engine.engine import Engine

from conftest import workspace_with_index

SOAK_NOTES = 600


def soak(ws: Path, n: int) -> None:
    """The soak run's shape: each edit appended, to one of the handbook's files in
    turn, a section with its own rare word."""
    files = sorted(ws.rglob("*.md"))
    for i in range(n):
        with files[i % len(files)].open("a", encoding="utf-8") as f:
            f.write(
                f"\n\n## Soak note {i}\n\nThe zebracorn{i} appears in this paragraph about a drill.\n"
            )


@pytest.fixture(scope="module")
def soaked(tmp_path_factory, golden_index):
    """The bundled handbook with 600 near-identical soak sections, indexed."""
    ws = workspace_with_index(tmp_path_factory.mktemp("soak") / "handbook", golden_index)
    soak(ws, SOAK_NOTES)
    eng = Engine(ws)
    rep = eng.index()
    assert rep.pending == 0
    yield eng
    eng.close()


def test_every_soak_word_asked_alone_ranks_its_section_first(soaked):
    """zebracorn602 was ranked 26th: dozens of near-identical sections outvoted,
    by meaning, the only section holding the word."""
    missed = {}
    for i in range(SOAK_NOTES):
        res = soaked.search(f"zebracorn{i}", limit=3).results
        if not res or res[0].heading != f"Soak note {i}":
            missed[i] = [r.heading for r in res]
    assert not missed, f"{len(missed)} of {SOAK_NOTES} not first, e.g. {list(missed.items())[:3]}"


# A hand-made team folder: tickets, error codes and people's names, each in one
# section among many alike, and one section mentioning Jira among notes on linking.
_TOPICS = [
    (
        "Queue backlog after the Tuesday deploy",
        "The order queue backed up after the deploy; the consumers were restarted",
    ),
    (
        "Queue backlog during the spring sale",
        "The order queue backed up under the sale's load; consumers were scaled out",
    ),
    (
        "Queue consumers stuck after a broker restart",
        "The consumers kept stale connections and the queue grew",
    ),
    ("Disk full on a build agent", "A build agent ran out of disk; old workspaces were removed"),
    (
        "Certificate expired on the staging gateway",
        "The staging gateway's certificate expired over the weekend",
    ),
    (
        "Slow checkout after a config change",
        "Checkout latency doubled after a cache setting was changed",
    ),
    (
        "Search index out of date",
        "The product search showed yesterday's prices until the index was rebuilt",
    ),
    (
        "Login failures for a few users",
        "Some users could not sign in after their passwords were reset",
    ),
    (
        "Backups skipped for two nights",
        "The nightly backup job did not run; its schedule had been disabled",
    ),
    (
        "Email notifications delayed",
        "Order emails went out hours late while the mail relay was throttled",
    ),
    (
        "Memory leak in the image service",
        "The image service grew until it was restarted every few hours",
    ),
    (
        "DNS change broke the status page",
        "The status page was unreachable after a DNS record was edited",
    ),
]
TICKETS = [4497, 4502, 4388, 4410, 4455, 4461, 4470, 4475, 4481, 4486, 4490, 4493]
INCIDENTS = "# Incidents\n\n" + "".join(
    f"## {title}\n\nTicket OPS-{n}. {what}. Follow-up agreed in the review.\n\n"
    for (title, what), n in zip(_TOPICS, TICKETS, strict=True)
)

ERRORS = """# Controller error codes

## Fan fault

Code E1187. The cooling fan does not spin up; check its connector and replace
the fan if it stays still.

## Fuser too cold

Code E1234. The fuser has not reached its working temperature; wait five
minutes, then switch the unit off and on.

## Paper jam in the tray

Code E1302. Paper is stuck in the input tray; open the tray and pull the sheet
out gently.

## Toner low

Code E1411. The toner cartridge is nearly empty; order a new one.

## Door open

Code E1520. A service door is open; close every door until it clicks.
"""

PEOPLE = """# Team

## Who runs the on-call rota

The on-call rota is kept by Anna Nowak; swaps are agreed in the team channel a
week ahead.

## Who approves access requests

Access to production is approved by Marta Kowalczyk, who reviews requests on
Mondays and Thursdays.

## Who orders hardware

Laptops and monitors are ordered by Piotr Wisniewski through the supplier
portal.

## Who onboards new starters

Ewa Lewandowska pairs each new starter with a buddy who shows them the
repositories and the deploy pipeline in their first week.

## Who signs off releases

Releases are signed off by Tomasz Zielinski after the release checklist is
green.

## Quarterly planning

Each quarter the team reviews the roadmap against what shipped, moves the
unfinished items to the next quarter or drops them, and agrees on one
reliability goal and one developer-experience goal. Hiring plans are revised
with the budget, training days are booked for the whole quarter at once, and
the dates of the two release freezes are put in the shared calendar. Contracts
with outside vendors are renewed through Szymanska in procurement, who needs
the numbers a month before the quarter starts. The notes of the meeting go
into the planning folder with the decisions listed first.
"""

LINKING = """# Notes

## Linking notes to each other

Write the other note's title in double brackets to link it; the link follows
renames, and the other note lists it among its backlinks.

## Linking a note to a heading

Add a hash and the heading's text after the note's title to link straight to
that section of the other note.

## Tasks and tickets in daily notes

Each daily note lists the tasks of the day as checkboxes; a ticket number in a
task links it to the tracker.

## Backlinks panel

The backlinks panel lists every note that links to the open one, with the
sentence around each link.

## Linking to a web page

Paste a web address into a note to link it; give the link a title in square
brackets to show words instead of the address.

## Weekly planning

Every Monday the team walks the board, picks the week's work and writes the
plan into the planning note; the board itself is kept in Jira, and each item's
key goes next to its line in the note.
"""


@pytest.fixture(scope="module")
def team(tmp_path_factory, golden_index):
    """The handbook plus the hand-made team folder, indexed."""
    ws = workspace_with_index(tmp_path_factory.mktemp("team") / "handbook", golden_index)
    team = ws / "team"
    team.mkdir()
    for name, text in (
        ("incidents.md", INCIDENTS),
        ("errors.md", ERRORS),
        ("people.md", PEOPLE),
        ("linking.md", LINKING),
    ):
        (team / name).write_text(text)
    eng = Engine(ws)
    rep = eng.index()
    assert rep.pending == 0
    yield eng
    eng.close()


def _rank(eng: Engine, query: str, heading: str, limit: int = 10) -> int | None:
    res = eng.search(query, limit=limit).results
    return next((i for i, r in enumerate(res, 1) if r.heading == heading), None)


@pytest.mark.parametrize(
    ("query", "heading"),
    [
        ("OPS-4497", "Queue backlog after the Tuesday deploy"),
        ("OPS-4455", "Certificate expired on the staging gateway"),
        ("E1234", "Fuser too cold"),
        ("e1411", "Toner low"),
        ("Kowalczyk", "Who approves access requests"),
        ("Szymanska", "Quarterly planning"),  # one sentence of a long section
    ],
)
def test_an_identifier_asked_alone_ranks_its_section_first(team, query, heading):
    assert _rank(team, query, heading) == 1


def test_a_plain_question_with_a_rare_word_keeps_its_only_section_in_the_top_5(team):
    """Jira is in one section; the dense side, which reads the question as one
    about linking notes, must not outvote it."""
    rank = _rank(team, "how do I link my Jira tickets to notes", "Weekly planning")
    assert rank is not None and rank <= 5, rank


def test_a_question_without_a_rare_word_still_ranks_by_meaning(team):
    """The other side of the rule: common words only, meaning decides."""
    rank = _rank(
        team, "how do I point a link at one part of another note", "Linking a note to a heading"
    )
    assert rank is not None and rank <= 2, rank


def test_explain_shows_what_made_the_weights(team):
    """E1234 is in one chunk and one keyword section: gap 1, so the dense weight
    is the decisive 0.4, and explain says why."""
    top = team.search("E1234", limit=1, explain=True).results[0]
    inputs = top.explain["weight_inputs"]
    assert inputs["keyword_gap"] == 1.0 and inputs["rarest_word_chunks"] == 1
    assert inputs["keyword_best"] > 0 and inputs["keyword_bound"] > inputs["keyword_best"]
    assert top.explain["weights"]["dense"] == pytest.approx(0.4)
