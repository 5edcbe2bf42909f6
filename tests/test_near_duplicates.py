"""Near-duplicate sections: the rule on hand-made vectors
(index/search/neardup.py), the matrix's prefilter (index/search/dense.py),
and a real folder indexed with the real model (index/engine/near.py): which
sections pair, both ways, and where. Expected values written by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mdseek.index.api import near_duplicates
from mdseek.index.engine.engine import Engine
from mdseek.index.engine.near import _NearRows, forget_near_rows
from mdseek.index.search.dense import DenseIndex
from mdseek.index.search.neardup import Unit, body_words, comparable, pairs


def unit(key: str, *rows: list[float], words: int = 100) -> Unit:
    vs = np.array(rows, dtype=np.float32)
    return Unit(key, vs / np.linalg.norm(vs, axis=1, keepdims=True), words)


A = [1.0, 0.0, 0.0]
NEAR_A = [0.96, 0.28, 0.0]  # cosine 0.96 with A
OFF_A = [0.8, 0.6, 0.0]  # cosine 0.80 with A
COPIES = [("x", 0.0), ("y", 2.0944), ("z", 4.1888)]  # 120 degrees apart around A: 0.96


def test_a_pair_above_the_threshold_and_of_comparable_length():
    mine = [unit("a", A)]
    others = [unit("b", NEAR_A), unit("c", OFF_A), unit("d", [0.0, 0.0, 1.0])]
    assert [(i, j, round(s, 2)) for i, j, s in pairs(mine, others, threshold=0.95)] == [
        (0, 0, 0.96)
    ]
    # both ways: the other names it back
    assert [(i, j) for i, j, _ in pairs(others, mine, threshold=0.95)] == [(0, 0)]
    # without the nearest test, a lower threshold takes the off one too
    assert [(i, j) for i, j, _ in pairs(mine, others, threshold=0.79, gap=None)] == [
        (0, 0),
        (0, 1),
    ]


def test_each_of_a_pair_is_within_the_gap_of_its_own_nearest():
    # b is a's nearest (0.96); c is 0.80 from a but 0.936 from b: c has a closer
    # match than a, so a and c share a template, not a text
    a, b, c = unit("a", A), unit("b", NEAR_A), unit("c", OFF_A)
    assert [(i, j) for i, j, _ in pairs([a], [b, c], threshold=0.79)] == [(0, 0)]
    assert [(i, j) for i, j, _ in pairs([a], [c], threshold=0.79, peers=[b])] == []
    assert [(i, j) for i, j, _ in pairs([a], [c], threshold=0.79)] == [(0, 0)]  # b unknown
    # three copies, each 0.96 from the others: each pairs with both
    x, y, z = (unit(k, [0.98658, 0.1633 * np.cos(f), 0.1633 * np.sin(f)]) for k, f in COPIES)
    assert {(i, j) for i, j, _ in pairs([x], [y, z], threshold=0.95)} == {(0, 0), (0, 1)}
    # a short section is nobody's nearest
    assert len(pairs([a], [c], threshold=0.79, peers=[unit("b", NEAR_A, words=5)])) == 1


def test_two_sections_of_one_file_pair_only_at_the_threshold_of_one_file():
    # one template written twice for other ends ("enable" and "disable") sits in
    # one file; copies that drift apart sit in two
    a = Unit("a", unit("a", A).vectors, 100, "install.md")
    b = Unit("b", unit("b", NEAR_A).vectors, 100, "install.md")
    elsewhere = Unit("b", b.vectors, 100, "upgrade.md")
    assert pairs([a], [b]) == []  # never, as shipped
    assert [(i, j) for i, j, _ in pairs([a], [elsewhere])] == [(0, 0)]
    assert [(i, j) for i, j, _ in pairs([a], [b], same_file=0.95)] == [(0, 0)]  # 0.96
    assert pairs([a], [b], same_file=0.97) == []
    # a unit of no known file is of none: hand-made units pair as before
    assert [(i, j) for i, j, _ in pairs([unit("a", A)], [unit("b", NEAR_A)])] == [(0, 0)]


def test_lengths_must_be_comparable_and_not_tiny():
    assert comparable(100, 90) and comparable(90, 100)  # the default: within 10%
    assert not comparable(100, 89)
    assert comparable(100, 50, ratio=0.5) and not comparable(100, 49, ratio=0.5)
    assert comparable(20, 20) and not comparable(19, 19)  # too short to say anything
    mine = [unit("a", A, words=300)]
    assert pairs(mine, [unit("b", NEAR_A, words=260)], threshold=0.95) == []
    assert len(pairs(mine, [unit("b", NEAR_A, words=270)], threshold=0.95)) == 1


def test_a_section_s_length_is_its_body_s_words():
    chunks = ["## Prerequisites\n\nMake sure the cluster runs.\n", "more words here\n"]
    assert body_words(chunks, "Prerequisites") == 8
    assert body_words(["[NOTE]\n----\n"], "[NOTE]") == 0  # a setext heading alone
    assert body_words(["Text before any heading.\n"], "Guide") == 4  # a preamble: the title


def test_a_section_never_pairs_with_itself_and_is_read_as_its_mean():
    # two chunks, mean (1, 1, 0)/sqrt 2: cosine 0.707 with A, 1.0 with the same mean
    two = unit("a2", A, [0.0, 1.0, 0.0])
    assert pairs([two], [two], threshold=0.5) == []
    same = unit("b2", [0.70710677, 0.70710677, 0.0])
    assert [(i, j) for i, j, _ in pairs([two], [same, unit("c", A)], threshold=0.9)] == [(0, 0)]


def test_the_matrix_finds_chunks_near_any_query_row():
    m = DenseIndex()
    vecs = np.array([A, NEAR_A, OFF_A], dtype=np.float32)
    m.reset(np.array([1, 2, 3]), vecs, np.array([7]), np.array([3]), np.array([A], np.float32))
    q = np.array([A], dtype=np.float32)
    # chunk 3's passage matches A exactly, but only a chunk's own vector counts
    assert m.chunks_near(q, 0.9) == {1, 2}
    m.remove([2])
    assert m.chunks_near(q, 0.9) == {1}
    assert m.chunks_near(np.zeros((0, 3), np.float32), 0.0) == set()


def test_the_rows_near_a_section_are_kept_and_brought_up_to_date():
    # the check after a save compares only what changed: the answer is the
    # matrix's own (chunks_near) after rows are added, removed or overwritten
    rng = np.random.default_rng(7)

    def rows(n: int) -> np.ndarray:
        m = rng.standard_normal((n, 8)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    m = DenseIndex()
    m.add(np.arange(1, 41), rows(40))
    qs = rows(5)
    kept = _NearRows(m)
    assert kept.near(qs, 0.3) == m.chunks_near(qs, 0.3) != set()
    near_q0 = sorted(m.chunks_near(qs[:1], 0.3))
    m.remove(near_q0[:1])  # a row gone
    m.add(np.array([41, 42]), np.stack([qs[0], -qs[1]]))  # rows new: one near q0
    m.add(np.array([near_q0[1]]), -qs[0][None, :])  # a row overwritten in place
    assert kept.near(qs, 0.3) == m.chunks_near(qs, 0.3)
    assert 41 in kept.near(qs[:1], 0.3) and near_q0[1] not in kept.near(qs[:1], 0.3)
    assert kept.near(qs[:2], 0.3) == m.chunks_near(qs[:2], 0.3)  # kept queries only
    assert kept.near(qs, 0.5) == m.chunks_near(qs, 0.5)  # another floor: all again


STEPS = (
    "Before you install the portal, make sure the cluster runs Kubernetes 1.28 or later, "
    "that you have cluster-admin rights, that the Helm command line tool version 3.10 or "
    "later is on your path, and that a default storage class can provision persistent "
    "volumes of at least 10 GiB for the database. Create a namespace for the portal and "
    "a pull secret for the registry before you run the chart."
)
BACKUP = (
    "Back up the database every night with the dump job: it writes a compressed archive "
    "to the object store bucket named in the values file, keeps thirty days of archives, "
    "and sends an alert to the on-call channel when a dump fails or takes over an hour."
)


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "install-aks.md").write_text(
        f"# Install on AKS\n\n## Prerequisites\n\n{STEPS}\n\n## Backups\n\n{BACKUP}\n"
    )
    (root / "install-eks.md").write_text(
        "# Install on EKS\n\nThe portal on Amazon's managed Kubernetes.\n\n"
        f"## Prerequisites\n\n{STEPS.replace('1.28', '1.29')}\n\n"
        "## Networking\n\nAn ingress controller routes traffic to the portal's service; "
        "a load balancer with a public address sits in front of it, and TLS ends there.\n"
    )
    (root / "notes.md").write_text(
        "# Notes\n\n## Short\n\nMake sure the cluster runs Kubernetes 1.28 or later.\n"
    )
    return root


def test_a_folder_s_near_duplicates_both_ways_with_their_places(tmp_path: Path):
    eng = Engine(_folder(tmp_path / "docs"), index_path=tmp_path / "index.sqlite")
    try:
        eng.models.embedder.load()
        eng.index()
        (dup,) = near_duplicates(eng, "install-aks.md")
        assert (dup.section.path, dup.section.heading, dup.section.start_line) == (
            "install-aks.md",
            "Prerequisites",
            2,
        )
        assert (dup.section.body_line, dup.section.end_line) == (3, 6)
        assert (dup.other.path, dup.other.heading, dup.other.slug, dup.other.start_line) == (
            "install-eks.md",
            "Prerequisites",
            "prerequisites",
            4,
        )
        assert 0.94 <= dup.score < 1.0  # flagged (int8 vectors: 0.947; fp32: 0.95+)
        (back,) = near_duplicates(eng, "install-eks.md")
        assert (back.section.start_line, back.other.path, back.other.start_line) == (
            4,
            "install-aks.md",
            2,
        )
        # the one-line note says part of it: too short to be its duplicate
        assert near_duplicates(eng, "notes.md") == []
        # a stricter threshold finds nothing
        assert near_duplicates(eng, "install-aks.md", threshold=0.9999) == []
    finally:
        eng.close()


def test_a_copy_in_the_same_file_is_not_flagged(tmp_path: Path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "portal.md").write_text(
        f"# Portal\n\n## Install on AKS\n\n{STEPS}\n\n"
        f"## Install on EKS\n\n{STEPS.replace('1.28', '1.29')}\n\n## Backups\n\n{BACKUP}\n"
    )
    eng = Engine(root, index_path=tmp_path / "index.sqlite")
    try:
        eng.models.embedder.load()
        eng.index()
        assert near_duplicates(eng, "portal.md") == []
        # at a threshold of one file, the two name each other
        found = near_duplicates(eng, "portal.md", same_file=0.5)
        assert [(d.section.heading, d.other.heading) for d in found] == [
            ("Install on AKS", "Install on EKS"),
            ("Install on EKS", "Install on AKS"),
        ]
    finally:
        eng.close()


def test_a_check_after_saves_answers_as_a_fresh_one(tmp_path: Path):
    # what a check keeps for the next (rows near each section, other files'
    # sections while their version stays) never changes what is flagged
    root = _folder(tmp_path / "docs")
    eng = Engine(root, index_path=tmp_path / "index.sqlite")

    def found(rel: str) -> list[tuple[str, int, str, int]]:
        return [
            (d.section.path, d.section.start_line, d.other.path, d.other.start_line)
            for d in near_duplicates(eng, rel, threshold=0.8)  # the short copy: 0.85
        ]

    try:
        eng.models.embedder.load()
        eng.index()
        assert found("install-aks.md") == [("install-aks.md", 2, "install-eks.md", 4)]
        # a copy of the backups section lands in the other guide
        eks = root / "install-eks.md"
        eks.write_text(eks.read_text() + f"\n## Backups\n\n{BACKUP}\n")
        eng.index_file(eks)
        kept = found("install-aks.md")
        forget_near_rows(eng)
        assert kept == found("install-aks.md")
        assert kept == [
            ("install-aks.md", 2, "install-eks.md", 4),
            ("install-aks.md", 6, "install-eks.md", 12),
        ]
        # the prerequisites drift apart: that pair goes
        eks.write_text(eks.read_text().replace(STEPS.replace("1.28", "1.29"), BACKUP[::-1]))
        eng.index_file(eks)
        kept = found("install-aks.md")
        forget_near_rows(eng)
        assert kept == found("install-aks.md") == [("install-aks.md", 6, "install-eks.md", 12)]
    finally:
        eng.close()
