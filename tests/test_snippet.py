"""Result snippets read as text: no markdown syntax, start at a sentence or word."""

from __future__ import annotations

from mdseek.index.snippet import plain_text, snippet

MD = """## Promote the replica

Run **`patronictl failover`** on the *standby*: see [the runbook](../runbooks/x.md#step-2)
and ![diagram](d.png) <b>now</b>.

- first item with `code`
- second item

| col a | col b |
|---|---|
| cell one | cell two |

```bash
pg_ctl promote
```
"""


def test_plain_text_drops_markup():
    t = plain_text(MD)
    assert t.startswith("Run patronictl failover on the standby: see the runbook and diagram now.")
    for raw in ("**", "`", "](", "<b>", "|", "##", "- first", "```"):
        assert raw not in t, raw
    assert "cell one cell two" in t and "first item with code" in t and "pg_ctl promote" in t


def test_snippet_starts_at_the_sentence_holding_the_term():
    filler = " ".join(f"Sentence number {i} talks about nothing in particular." for i in range(12))
    text = f"{filler} The quokka replica is promoted by the on-call engineer after the check. More text follows here."
    s = snippet(text, ["quokka"], width=120)
    body = s.removeprefix("… ")
    assert s.startswith("… ") and "quokka" in s
    assert text[text.index(body[:30]) - 2 : text.index(body[:30])] == ". ", s  # a sentence start
    assert len(s) <= 124 and s.endswith("…")


def test_snippet_mid_sentence_starts_at_a_word():
    words = " ".join(f"w{i}" for i in range(200))
    s = snippet(words + " target " + words, ["target"], width=80)
    assert s.startswith("… w") and " target " in s
    first = s.split()[1]
    assert first.startswith("w") and first[1:].isdigit()  # a whole word, not a cut one


def test_short_text_is_returned_whole():
    assert snippet("# H\n\nJust *this*.", ["this"]) == "Just this."
