"""Filters on tags and front-matter fields: the grammar, lists and dates, an
unknown field, and a filtered search over a real index (the index untouched)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from mdseek.index.engine import facade
from mdseek.index.engine.engine import Engine
from mdseek.index.search.filters import BadFilter, Filter, props_of, split_query
from mdseek.index.search.requests import BadRequest, SearchRequest, check_filter

NOTES = {
    "a.md": props_of(
        {"status": "published", "owner": ["ops-team", "Alice"], "date": dt.date(2024, 3, 1),
         "tags": ["runbook"], "priority": 2},
        ["runbook"],
    ),
    "b.md": props_of(
        {"status": "Draft", "owner": "bob", "date": "2023-01-01", "priority": 7}, ["area/web"]
    ),
    "c.md": props_of({}, ["Runbook/DB"]),
}  # fmt: skip


def pick(tags=(), where=()) -> tuple[list[str], list[str]]:
    got, notes = Filter.make(tags, where).select(NOTES)
    return sorted(got), notes


def test_tags_match_their_sub_tags_without_case():
    assert pick(["runbook"]) == (["a.md", "c.md"], [])
    assert pick(["#Runbook/db"]) == (["c.md"], [])
    assert pick(["#area"]) == (["b.md"], [])
    assert pick(["run"]) == ([], [])  # a tag is a whole name, not a prefix
    assert pick(["runbook", "area"]) == ([], [])  # every term must hold


def test_fields_equal_contain_and_lists_match_any_element():
    assert pick(where=["status=published"]) == (["a.md"], [])
    assert pick(where=["status=draft"]) == (["b.md"], [])  # case ignored
    assert pick(where=["owner~ops"]) == (["a.md"], [])
    assert pick(where=["owner=alice"]) == (["a.md"], [])
    assert pick(where=["status!=published"]) == (["b.md", "c.md"], [])
    assert pick(["runbook"], ["status=published"]) == (["a.md"], [])


def test_numbers_and_dates_compare_as_such_or_say_they_cannot():
    assert pick(where=["priority>5"]) == (["b.md"], [])
    assert pick(where=["priority<=2"]) == (["a.md"], [])  # 2, not "2" < "10" as text
    assert pick(where=["date>=2024-01-01"]) == (["a.md"], [])  # a YAML date and a text date
    assert pick(where=["date<2024-01-01"]) == (["b.md"], [])
    got, notes = pick(where=["date>2024"])
    assert got == [] and notes == [
        "date>2024: date holds dates: compare with a date such as 2024-01-31"
    ]
    got, notes = pick(where=["status>draft"])
    assert got == [] and "neither a number nor a date" in notes[0]


MORE = {
    "x.md": props_of(
        {"reviewed": [dt.date(2024, 1, 5), dt.date(2025, 6, 1)], "scores": [1, 9],
         "when": dt.datetime(2024, 3, 1, 10, 0), "meta": {"x": 1}},
        [],
    ),
    "y.md": props_of(
        {"reviewed": [dt.date(2023, 1, 5)], "scores": [2, 3], "when": "2024-02-01T09:00:00",
         "meta": "plain"},
        [],
    ),
}  # fmt: skip


def test_lists_of_dates_and_numbers_times_and_maps_compare_or_say_they_cannot():
    def more(w: str) -> tuple[list[str], list[str]]:
        got, notes = Filter.make(where=[w]).select(MORE)
        return sorted(got), notes

    # a list of dates or numbers holds when any element does
    assert more("reviewed>2025-01-01") == (["x.md"], [])
    assert more("reviewed<2024-01-01") == (["y.md"], [])
    assert more("reviewed=2024-01-05") == (["x.md"], [])
    assert more("scores>5") == (["x.md"], [])
    assert more("scores<2") == (["x.md"], [])
    # a YAML timestamp and a text one compare with a date or a date and time
    assert more("when>2024-02-15") == (["x.md"], [])
    assert more("when<2024-03-01T09:30") == (["y.md"], [])
    # a mapping: equal and contains read its text; an order says it cannot
    assert more("meta=plain") == (["y.md"], [])
    assert more("meta~x") == (["x.md"], [])
    got, notes = more("meta>3")
    assert got == [] and notes == [
        "meta>3: some notes' meta is not a number (e.g. '{\"x\": 1}'): left out"
    ]
    got, notes = more("reviewed>5")
    assert got == [] and notes == [
        "reviewed>5: reviewed holds dates: compare with a date such as 2024-01-31"
    ]


def test_a_note_not_read_since_a_migration_is_said_so():
    got, notes = Filter.make(where=["status!=published"]).select({**NOTES, "d.md": None})
    assert sorted(got) == ["b.md", "c.md", "d.md"]  # no field: != holds
    assert notes == [
        "1 of 4 notes not yet read for filters (the index is being brought up to date)"
    ]


def test_an_unknown_field_is_an_empty_answer_with_a_note():
    got, notes = pick(where=["ownr=bob"])
    assert got == []
    assert notes == [
        "no note has the field ownr (fields in this folder: date, owner, priority, status, tags)"
    ]


def test_bad_terms_are_one_line_errors_and_a_query_may_lead_with_filters():
    for bad in ("status", "=x", "status=", "a b=c"):
        with pytest.raises(BadFilter):
            Filter.make(where=[bad])
    with pytest.raises(BadRequest, match="tag must be a text or a list of texts"):
        check_filter(tag=3)
    assert check_filter(tag="#runbook", where=["owner~ops"]) == Filter(
        ("runbook",), Filter.make(where=["owner~ops"]).tests
    )
    with pytest.raises(BadRequest, match="path takes = or != and a glob"):
        check_filter(where="path~docs")
    with pytest.raises(BadRequest, match="bad path glob"):
        check_filter(where="path=[x]")
    assert Filter.make(where=["path=docs/**", "path!=drafts/**"]).paths == ("docs/**", "!drafts/**")
    f, rest = split_query("#runbook status=published restart the db")
    assert (str(f), rest) == ("#runbook status=published", "restart the db")
    assert split_query("restart #runbook")[1] == "restart #runbook"  # only leading words


def test_a_filtered_search_over_a_real_index_leaves_the_index_alone(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text(
        "---\nstatus: published\ntags: [runbook]\n---\n# Restart the database\n\nRestart it.\n"
    )
    (ws / "b.md").write_text("---\nstatus: draft\n---\n# Restart the web tier\n\nRestart it.\n")
    (ws / "c.md").write_text("# Notes\n\nRestart it. #runbook/db\n")
    eng = Engine(ws)
    try:
        eng.index()
        before = eng.store.counts()

        def paths(**kw) -> list[str]:
            req = SearchRequest.make("restart", 10, "lexical", filter=check_filter(**kw))
            return sorted(r.path for r in facade.search(eng, req).results)

        assert paths() == ["a.md", "b.md", "c.md"]
        assert paths(tag="runbook") == ["a.md", "c.md"]
        assert paths(where="status=draft") == ["b.md"]
        assert paths(where=["path!=b.md"]) == ["a.md", "c.md"]  # paths in the one grammar
        assert paths(tag="runbook", where=["path=c*"]) == ["c.md"]
        req = SearchRequest.make("restart", 10, "lexical", filter=check_filter(where="nope=1"))
        resp = facade.search(eng, req)
        assert resp.results == [] and resp.note.startswith("no note has the field nope")
        assert eng.store.counts() == before
    finally:
        eng.close()
