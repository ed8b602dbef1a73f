"""The reference and alternate windows of a variant: GPN's window rule, a pinned indel rule.

For a variant at 1-based ``pos`` with alleles ``ref``/``alt`` on a chromosome of ``L`` bases and a
window of ``W`` bases (0-based, half-open coordinates)::

    p     = pos - 1
    start = p - W // 2                      # GPN's run_vep: the variant at index W // 2
    start = min(max(0, start), L - W)       # at a chromosome end: shifted inwards, is_clamped
                                            # (pairs/windows.py: centred_start)
    reference = genome[start : start + W]   # upper case
    alternate = (genome[start : p] + alt + genome[p + len(ref) :])[:W]

so a deletion pulls the next genome bases in on the right and an insertion pushes the last ones
out: both windows have ``W`` bases, and for a causal model every base before ``p`` is the same in
both. ``variant_offset = p - start`` (``W // 2`` unless clamped). GPN pads with ``N`` at a
chromosome end and Evo 2 truncates the window there; the three agree everywhere else.

A variant is excluded (the reason counted, never silently) when its chromosome is not in the
FASTA (names match with or without a ``chr`` prefix, and ``MT`` matches ``chrM``) or is shorter
than ``W``; its ALT is symbolic or a breakend (``<DEL>``, ``]1:5]A``), ``*``, missing (``.``) or
has a letter other than A/C/G/T (so has its REF); REF equals ALT; the position lies past the
chromosome's end; REF does not match the genome at ``p`` (compared in upper case; never
swapped); REF runs past the window; or a deletion needs bases past the chromosome's end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perturbation_bench.pairs.windows import centred_start

ACGT = re.compile("^[ACGT]+$")


@dataclass(frozen=True)
class VariantWindows:
    """Both windows of one variant and where they sit."""

    reference: str
    alternate: str
    window_start: int
    variant_offset: int
    is_clamped: bool


def allele_problem(ref: str, alt: str) -> str | None:
    """Why alleles ``ref``/``alt`` (upper case) cannot make a pair, or None if they can."""
    if alt.startswith("<") or "[" in alt or "]" in alt:
        return "symbolic_or_breakend_alt"
    if alt == "*":
        return "star_alt"
    if alt == ".":
        return "no_alt"
    if not ACGT.match(ref) or not ACGT.match(alt):
        return "non_acgt_allele"
    if ref == alt:
        return "ref_equals_alt"
    return None


def resolve_chromosome(name: str, fasta_names) -> str | None:
    """The FASTA's name for chromosome ``name`` (with or without ``chr``; ``MT`` = ``chrM``)."""
    bare = name[3:] if name.lower().startswith("chr") else name
    candidates = [name, bare, f"chr{bare}"]
    if bare.upper() in ("M", "MT"):
        candidates += ["MT", "chrM", "M", "chrMT"]
    return next((candidate for candidate in candidates if candidate in fasta_names), None)


def variant_windows(genome, chrom: str, pos: int, ref: str, alt: str, window: int):
    """:class:`VariantWindows` for the variant (module docstring), or the exclusion reason.

    Args:
        genome: a :class:`~perturbation_bench.dataset.genome.Genome` (upper-case bases).
        chrom: the FASTA's name of the chromosome.
    """
    length = genome.length(chrom)
    if length < window:
        return "chromosome_shorter_than_window"
    p = pos - 1
    if p + len(ref) > length:
        return "position_past_chromosome_end"
    if genome.fetch(chrom, p, p + len(ref)) != ref:
        return "ref_mismatch"
    start = centred_start(p, window, length)
    if p + len(ref) > start + window:
        return "ref_longer_than_window"
    reference = genome.fetch(chrom, start, start + window)
    kept = p - start + len(alt)
    need = max(0, window - kept)
    after = p + len(ref)
    if after + need > length:
        return "deletion_past_chromosome_end"
    alternate = (reference[: p - start] + alt + genome.fetch(chrom, after, after + need))[:window]
    return VariantWindows(reference, alternate, start, p - start, start != p - window // 2)
