"""Genomic HGVS (``g.``) variants, as MaveDB's score tables name them, made VCF-style alleles.

A MaveDB score table (``build variants --from mavedb``) names each variant in a column
(``hgvs_nt`` by default) as ``[ACCESSION:]g.<change>`` on a named reference: the chromosome is
``--chrom`` where given, else the accession (matched to the FASTA's names as every variant's
chromosome is, ``fasta.py``). Positions are 1-based on that chromosome. The forms read, with
``G`` the reference genome (1-based, inclusive ranges)::

    g.P R>A             pos P, ref R, alt A (one base each; R checked against G later)
    g.S_EdelinsX        pos S, ref G[S..E], alt X        (g.PdelinsX: S = E = P)
    g.S_Edel            pos S-1, ref G[S-1..E], alt G[S-1]   (VCF's anchor base; S >= 2)
    g.S_EinsX           (E = S + 1) pos S, ref G[S], alt G[S] + X
    g.S_Edup            pos E, ref G[E], alt G[E] + G[S..E]

A value that is not one of these, a multi-variant ``g.[...;...]``, MaveDB's ``_wt``/``_sy``
placeholders, an empty cell, or one whose positions lie off the chromosome gives a reason
instead (:func:`hgvs_alleles`), and the build excludes, counts and names that row.
"""

from __future__ import annotations

import re

CHANGE = re.compile(
    r"^g\.(?P<start>[1-9][0-9]*)(?:_(?P<end>[1-9][0-9]*))?"
    r"(?:(?P<ref>[ACGT])>(?P<alt>[ACGT])|(?P<kind>delins|del|ins|dup)(?P<seq>[ACGT]*))$"
)


def split_accession(text: str) -> tuple[str | None, str]:
    """``("NC_000017.10", "g.41276135T>C")`` from ``"NC_000017.10:g.41276135T>C"``; no
    accession: ``(None, text)``."""
    accession, _, change = text.rpartition(":")
    return accession or None, change


def hgvs_alleles(change: str, sequence) -> tuple[int, str, str] | str:
    """``(pos, ref, alt)`` of one ``g.`` change (module docstring) on a chromosome whose bases
    ``sequence(start0, end0)`` reads (upper case), or the reason it gives none."""
    if change.startswith("g.["):
        return "hgvs_multiple_variants"
    match = CHANGE.match(change)
    if match is None:
        return "hgvs_unsupported"
    start = int(match["start"])
    end = int(match["end"] or start)
    if match["ref"]:
        return (start, match["ref"], match["alt"]) if end == start else "hgvs_unsupported"
    if not _well_formed(match["kind"], start, end, match["seq"]):
        return "hgvs_unsupported"
    return _edit_alleles(match["kind"], start, end, match["seq"], sequence)


def _well_formed(kind: str, start: int, end: int, inserted: str) -> bool:
    """Whether an edit's range and bases fit its kind: ``start <= end``, bases after ``delins``
    and ``ins`` alone, and an insertion between two adjacent bases (``end = start + 1``)."""
    return (
        start <= end
        and (kind in ("delins", "ins")) == bool(inserted)
        and (kind != "ins" or end == start + 1)
    )


def _edit_alleles(kind: str, start: int, end: int, inserted: str, sequence):
    """``(pos, ref, alt)`` of a well-formed ``delins``, ``del``, ``ins`` or ``dup`` read against
    the chromosome (a deletion takes the base before it as VCF's anchor), or
    ``"hgvs_off_chromosome"`` where the bases it needs lie off it."""
    anchor = start - 1 if kind == "del" else start
    bases = sequence(anchor - 1, end) if anchor >= 1 else ""
    if len(bases) != end - anchor + 1:
        return "hgvs_off_chromosome"
    if kind == "delins":
        return start, bases, inserted
    if kind == "del":
        return anchor, bases, bases[0]
    if kind == "ins":
        return start, bases[0], bases[0] + inserted
    return end, bases[-1], bases[-1] + bases  # dup
