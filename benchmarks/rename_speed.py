"""How long the rename engine takes in a big folder (index/links/rename.py and move.py alone:
files read and parsed beforehand, as the server keeps them).

    python -m benchmarks.rename_speed          # 1,000 notes, each linking 5 others
    python -m benchmarks.rename_speed --all    # ... and every note also links note 0

Renames note 0's heading and moves note 0 to another folder (as ``x/m.md``: a
one-letter name, in every note's text); prints the median time of
``--repeat`` runs and the number of edits of each.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from mdseek.index.links.links import Link, find_links
from mdseek.index.links.move import Move, move_files
from mdseek.index.links.rename import rename_heading
from mdseek.index.text.aliases import AliasMap, doc_aliases
from mdseek.index.text.document import ParsedDocument
from mdseek.index.text.parse import parse_text


class _Vault:
    def __init__(self, n: int, every: bool):
        rnd = random.Random(1)
        self.texts: dict[str, str] = {}
        for i in range(n):
            body = [f"# Note {i}", "", f"## Part {i}", ""]
            for _ in range(5):
                j = rnd.randrange(n)
                body += [f"See [n{j}](../d{j % 20}/n{j}.md#part-{j}) and [[n{j}#Part {j}]].", ""]
            if every:
                body.append("[[n0#Part 0]] [z](../d0/n0.md#part-0)")
            self.texts[f"d{i % 20}/n{i}.md"] = "\n".join(body) + "\n"
        self.files = list(self.texts)
        self.docs = {r: parse_text(t, r) for r, t in self.texts.items()}
        self.found = {r: find_links(d) for r, d in self.docs.items()}
        # the rename engine reads the folder's front-matter aliases (none here)
        self.aliases = AliasMap({r: doc_aliases(d) for r, d in self.docs.items()}, self.files)

    def doc(self, rel: str) -> ParsedDocument | None:
        return self.docs.get(rel)

    def text(self, rel: str) -> str | None:
        return self.texts.get(rel)

    def links(self, rel: str, doc: ParsedDocument) -> list[Link]:
        return self.found[rel]

    def exists(self, rel: str) -> bool:
        return rel in self.texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--all", action="store_true", help="every note also links note 0")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each; the median is printed")
    args = ap.parse_args()
    v = _Vault(args.notes, args.all)
    doc = v.docs["d0/n0.md"]
    rename_s, move_s = [], []
    for _ in range(max(1, args.repeat)):
        t0 = time.perf_counter()
        out = rename_heading(v, "d0/n0.md", doc, doc.headings[1], "Renamed")
        t1 = time.perf_counter()
        moved = move_files(v, [Move("d0/n0.md", "x/m.md")])
        t2 = time.perf_counter()
        rename_s.append(t1 - t0)
        move_s.append(t2 - t1)
    edits = sum(map(len, out.edits.values()))
    medits = sum(map(len, moved.edits.values()))
    print(
        f"{args.notes} notes: heading rename {statistics.median(rename_s):.3f} s ({edits} edits), "
        f"file move {statistics.median(move_s):.3f} s ({medits} edits); "
        f"median of {len(move_s)}"
    )


if __name__ == "__main__":
    main()
