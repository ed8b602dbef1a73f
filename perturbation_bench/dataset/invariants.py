"""The invariants ``validate.py`` checks on every row of a dataset, and the rows they apply to.

An invariant applies to the kinds of pair files it names (``pairs/kinds.py``); one whose columns a
row lacks, or that needs a FASTA that was not given, is skipped. Positions are 0-based,
half-open; sequences are compared in upper case.

- ``window_size``: the length equals ``window_size_bp`` (syn) or
  ``window_genome_end - window_genome_start``.
- ``diff_in_patch``: every differing base lies in ``[patch_start_in_seq, patch_end_in_seq)``.
- ``codon_aligned``: the patch starts a whole number of codons after the first complete codon
  (``cds_start_in_seq + phase_gtf``) and is a whole number of codons long.
- ``synonymous_only`` (syn): both sequences translate to the same protein over the patch.
- ``patch_is_repeat`` (motif): ``sequence[patch]`` equals ``actual_motif``.
- ``matches_genome`` (needs ``--fasta``): ``original_sequence`` equals the genome at
  ``[window_genome_start, window_genome_end)`` on ``chr``, reverse-complemented for strand ``-``.

Controls (``build controls``), with the element's span in the window
``[element_start - window_start, element_end - window_start)``, mirrored for strand ``-``:

- ``flanks_identical``: every differing base lies in the element's span;
- ``composition_kept``: the span's K-mer counts are equal, and its first and last ``K - 1``
  bases, ``K`` the order its ``shuffle`` keeps (``dna.SHUFFLE_ORDERS``: 1 for
  ``mononucleotide``, 2 for ``dinucleotide``, K for ``kmer:K``; an unknown shuffle fails);
- ``control_matches_genome`` (needs ``--fasta``): ``original_sequence`` equals the genome from
  ``window_start`` on ``chrom``, reverse-complemented for strand ``-``.

A kind that declares its document shape (``pairs/shape.py``) adds its own invariants there
(the footprint kind: ``kinds/footprints/invariants.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from perturbation_bench.dataset.codons import load_codon_table
from perturbation_bench.dna import SHUFFLE_ORDERS, kmer_counts
from perturbation_bench.formats.fasta import Genome
from perturbation_bench.pairs.kinds import KINDS
from perturbation_bench.wording import some


@dataclass
class Invariant:
    """One property, the columns it needs, and what was found (counted in ``unit``)."""

    name: str
    columns: tuple[str, ...]
    holds: Callable[[dict], bool] | None
    kinds: tuple[str, ...] = ("syn", "motif")
    explain: Callable[[dict], str] | None = None
    """For the first row that breaks it: what exactly is wrong there."""
    unit: str = "rows"
    checked: int = 0
    broken: int = 0
    first: str | None = None
    skipped_because: str = ""
    applicable: bool = True
    """False when the dataset holds rows but none of this invariant's kinds."""


def _window_size(row: dict) -> bool:
    expected = row.get("window_size_bp") or row["window_genome_end"] - row["window_genome_start"]
    return len(row["original_sequence"]) == expected


def _diff_in_patch(row: dict) -> bool:
    start, end = row["patch_start_in_seq"], row["patch_end_in_seq"]
    a, b = row["original_sequence"], row["sequence"]
    return a[:start] == b[:start] and a[end:] == b[end:]


def _codon_aligned(row: dict) -> bool:
    offset = row["patch_start_in_seq"] - row["cds_start_in_seq"] - row["phase_gtf"]
    return offset % 3 == 0 and (row["patch_end_in_seq"] - row["patch_start_in_seq"]) % 3 == 0


def _element_span(row: dict) -> tuple[int, int]:
    start, end = (
        row["element_start"] - row["window_start"],
        row["element_end"] - row["window_start"],
    )
    width = len(row["original_sequence"])
    return (start, end) if row["strand"] != "-" else (width - end, width - start)


def _flanks_identical(row: dict) -> bool:
    start, end = _element_span(row)
    a, b = row["original_sequence"], row["sequence"]
    return a[:start] == b[:start] and a[end:] == b[end:]


def _composition_kept(row: dict) -> bool:
    start, end = _element_span(row)
    a, b = row["original_sequence"][start:end], row["sequence"][start:end]
    k = SHUFFLE_ORDERS.get(row["shuffle"])
    if k is None:
        return False  # a shuffle this version does not know keeps nothing it can check
    ends = k - 1
    return (
        kmer_counts(a, k) == kmer_counts(b, k)
        and a[:ends] == b[:ends]
        and (a[len(a) - ends :] == b[len(b) - ends :])
    )


def invariants(fasta: str | Path | None = None) -> list[Invariant]:
    """The row invariants of the module docstring (``matches_genome`` is skipped without ``fasta``)."""
    code = load_codon_table("human")  # the standard genetic code
    patch = ("original_sequence", "sequence", "patch_start_in_seq", "patch_end_in_seq")

    def translate(row, name):
        return code.translate(row[name][row["patch_start_in_seq"] : row["patch_end_in_seq"]])

    def first_changed_amino_acid(row) -> str:
        for i in range(row["patch_start_in_seq"], row["patch_end_in_seq"] - 2, 3):
            a, b = row["original_sequence"][i : i + 3], row["sequence"][i : i + 3]
            if code.translate(a) != code.translate(b):
                return f"codon at {i}: {a} ({code.translate(a)}) -> {b} ({code.translate(b)})"
        return "the patch translates differently"

    checks = [
        Invariant(
            "window_size",
            ("original_sequence", "window_genome_start", "window_genome_end"),
            _window_size,
        ),
        Invariant("diff_in_patch", patch, _diff_in_patch),
        Invariant(
            "codon_aligned",
            ("patch_start_in_seq", "patch_end_in_seq", "cds_start_in_seq", "phase_gtf"),
            _codon_aligned,
        ),
        Invariant(
            "synonymous_only",
            patch,
            lambda r: translate(r, "original_sequence") == translate(r, "sequence"),
            kinds=("syn",),
            explain=first_changed_amino_acid,
        ),
        Invariant(
            "patch_is_repeat",
            (*patch, "actual_motif"),
            lambda r: (
                r["sequence"][r["patch_start_in_seq"] : r["patch_end_in_seq"]] == r["actual_motif"]
            ),
            kinds=("motif",),
        ),
    ]
    element = (
        "original_sequence",
        "sequence",
        "window_start",
        "element_start",
        "element_end",
        "strand",
    )
    checks += [
        Invariant("flanks_identical", element, _flanks_identical, kinds=("controls",)),
        Invariant(
            "composition_kept", (*element, "shuffle"), _composition_kept, kinds=("controls",)
        ),
    ]
    checks += [check for kind in KINDS for check in kind.invariants()]
    genome = Genome(fasta) if fasta is not None else None

    for name, kinds, columns in (
        ("matches_genome", ("syn", "motif"), ("chr", "window_genome_start", "window_genome_end")),
        ("control_matches_genome", ("controls",), ("chrom", "window_start", None)),
    ):
        checks.append(
            Invariant(
                name,
                ("original_sequence", "strand", *filter(None, columns)),
                functools.partial(_matches_genome, genome, *columns)
                if genome is not None
                else None,
                kinds=kinds,
                explain=functools.partial(_genome_mismatch, genome, *columns),
                skipped_because="" if genome is not None else "no --fasta given",
            )
        )
    return checks


def _genome_window(genome: Genome, chrom: str, start: str, end: str | None, row: dict):
    """The genome's bases where ``row`` (its columns ``chrom``, ``start``, ``end`` or its
    length) says its window is, on its strand; None for a sequence the FASTA lacks."""
    if row[chrom] not in genome:
        return None
    stop = row[end] if end else row[start] + len(row["original_sequence"])
    return genome.fetch(row[chrom], row[start], stop, row["strand"])


def _matches_genome(genome, chrom, start, end, row: dict) -> bool:
    return row["original_sequence"] == _genome_window(genome, chrom, start, end, row)


def _genome_mismatch(genome, chrom, start, end, row: dict) -> str:
    """How a row breaks ``matches_genome``: the sequence the FASTA lacks, the lengths, or the
    first base that differs."""
    window, original = _genome_window(genome, chrom, start, end, row), row["original_sequence"]
    if window is None:
        return f"{chrom} {row[chrom]!r} is not a sequence of the FASTA ({some(genome.names)})"
    if len(window) != len(original):
        return f"the genome's window is {len(window)} bp, original_sequence {len(original)} bp"
    at = next(i for i, (a, b) in enumerate(zip(window, original, strict=True)) if a != b)
    return f"original_sequence differs from the genome's window first at base {at}"
