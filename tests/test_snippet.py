"""Result snippets read as text: no markdown syntax, start at a sentence or word."""

from __future__ import annotations

from mdseek.index.text.parse import parse_text
from mdseek.index.text.snippet import plain_text, snippet

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
    assert len(s) <= 124 and (s.endswith("…") or text.endswith(body))


def test_snippet_mid_sentence_starts_at_a_word():
    words = " ".join(f"w{i}" for i in range(200))
    s = snippet(words + " target " + words, ["target"], width=80)
    assert s.startswith("… w") and " target " in s
    first = s.split()[1]
    assert first.startswith("w") and first[1:].isdigit()  # a whole word, not a cut one


def test_short_text_is_returned_whole():
    assert snippet("# H\n\nJust *this*.", ["this"]) == "Just this."


def test_first_use_from_many_threads_at_once():
    """markdown-it and mdurl build tables on first use, not thread-safely; a
    search's snippets and a prefetch once raced on mdurl's (IndexError in CI).
    Each round starts from cold tables and lets 8 threads parse links at once;
    without the warm-up under a lock about half the rounds failed."""
    import sys
    import threading

    import mdurl._decode
    import mdurl._encode

    from mdseek.index.text import markdown as markdown_mod
    from mdseek.index.text import snippet as snippet_mod

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for _ in range(20):
            mdurl._encode.encode_cache.clear()
            mdurl._decode.decode_cache.clear()
            snippet_mod._parser.cache_clear()
            markdown_mod.markdown_parser.cache_clear()
            plain_text.cache_clear()
            start = threading.Barrier(8)
            got: dict[int, object] = {}
            threads = [
                threading.Thread(target=_parse_at_once, args=(i, start, got)) for i in range(8)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert got == {
                i: f"See guide {i} and http://a.b/{i}." if i % 2 else f"T{i}" for i in range(8)
            }
    finally:
        sys.setswitchinterval(old)
        plain_text.cache_clear()


def _parse_at_once(i: int, start, got: dict) -> None:
    start.wait()
    try:
        if i % 2:
            got[i] = plain_text(f"See [guide {i}](http://x.y/ä/{i}) and <http://a.b/{i}>.")
        else:
            got[i] = parse_text(f"[r{i}]: http://x.y/ä;{i}\n\n# T{i}\n", "a.md").title
    except Exception as e:  # the failure being tested
        got[i] = e
