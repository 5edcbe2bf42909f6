"""Indexing progress on stderr, for ``mdseek index`` and ``mdseek search``.

Owns: the progress bar and lines. Imports no other module of the CLI.
"""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    """Indexing progress on stderr: a tqdm bar per stage on a terminal, else a
    plain line once a stage has run ``first`` seconds, then at most every
    ``every`` seconds (and when a stage ends). If indexing still runs after
    ``opening`` seconds with nothing said, ``what`` is said: a first run (which
    embeds everything, and reports only after a batch) speaks within a second
    or two; an unchanged index is usually done before and prints nothing."""

    LABELS = {
        "parse": ("chunking", "files"),
        "embed": ("embedding", "chunks"),
        "passages": ("embedding passages", "passages"),
    }
    EMBEDDING = ("embed", "passages")  # texts to embed: the time left counts both

    def __init__(
        self, enabled: bool, every: float = 5.0, first: float = 1.0, what: str = "",
        opening: float = 0.5,
    ):  # fmt: skip
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.every = every
        self.first = first
        self.bars: dict[str, object] = {}
        self.last: dict[str, tuple[float, float]] = {}  # stage -> (started, last printed)
        self._lock = threading.Lock()
        self._said = False
        self.counts: dict[str, tuple[int, int]] = {}  # stage -> (done, total)
        self.embed_start: float | None = None
        self.tokens: tuple[int, int] | None = None  # (done, total) tokens of the texts to embed
        self._timer: threading.Timer | None = None
        if enabled and what:
            self._timer = threading.Timer(opening, self._say, args=(f"mdseek: {what} ...", True))
            self._timer.daemon = True
            self._timer.start()

    def _say(self, line: str, opening: bool = False) -> None:
        with self._lock:
            if opening and self._said:
                return
            self._said = True
            print(line, file=sys.stderr, flush=True)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "wait":  # said even without a bar: otherwise the command seems stuck
            print(
                "mdseek: another mdseek process is embedding this index; waiting to reuse its vectors",
                file=sys.stderr,
            )
            return
        if not self.enabled:
            return
        if stage == "tokens":  # for the time left only
            self.tokens = (done, total)
            return
        if stage in self.EMBEDDING:
            self.counts[stage] = (done, total)
            if self.embed_start is None:
                self.embed_start = time.monotonic()
        if total <= 0 or (stage == "passages" and done == 0):
            return  # nothing to show yet (each pass tells both totals first)
        label, unit = self.LABELS.get(stage, (stage, "items"))
        left = self.time_left() if stage in self.EMBEDDING else ""
        if self.tty:
            from tqdm import tqdm

            self._said = True

            bar = self.bars.get(stage)
            if bar is None:
                # no rate: counts jump when unchanged files are skipped, and
                # "4400581.25 chunks/s" says nothing
                bar = self.bars[stage] = tqdm(
                    total=total,
                    desc=label,
                    unit=f" {unit}",
                    file=sys.stderr,
                    leave=True,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                    + unit
                    + " [{elapsed}] {postfix}",
                )
            bar.n = done  # type: ignore[attr-defined]
            if left:
                bar.set_postfix_str(left, refresh=False)  # type: ignore[attr-defined]
            bar.refresh()  # type: ignore[attr-defined]
            return
        now = time.monotonic()
        start, printed = self.last.setdefault(stage, (now, now))
        if done >= total:
            # the end of a stage that took a while (quick ones print nothing)
            if printed != start or now - start >= 1.0:
                self._say(f"mdseek: {label} {done}/{total} {unit} (100%) in {now - start:.1f}s")
            self.last[stage] = (now + 1e9, now + 1e9)  # once per stage
        elif now - printed >= (self.first if printed == start else self.every):
            self.last[stage] = (start, now)
            self._say(
                f"mdseek: {label} {done}/{total} {unit} ({100 * done // total}%"
                + (f", {left})" if left else ")")
            )

    def time_left(self) -> str:
        """About how long the embedding has left: the tokens (else the texts)
        still to embed, chunks and passages, at the rate so far; "" until 2 s
        have passed."""
        if self.embed_start is None:
            return ""
        spent = time.monotonic() - self.embed_start
        if self.tokens is not None:  # texts come shortest first: tokens tell the work left
            done, todo = self.tokens[0], self.tokens[1] - self.tokens[0]
        else:
            done = sum(d for d, _ in self.counts.values())
            todo = sum(t - d for d, t in self.counts.values())
        if spent < 2 or done <= 0 or todo <= 0:
            return ""
        secs = spent / done * todo
        return f"about {secs / 60:.0f} min left" if secs >= 90 else f"about {secs:.0f} s left"

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for b in self.bars.values():
            b.close()  # type: ignore[attr-defined]
