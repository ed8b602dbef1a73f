"""The reference and alternate windows of a variant: GPN's window rule, three edge rules, a pinned
indel rule.

For a variant at 1-based ``pos`` with alleles ``ref``/``alt`` on a chromosome of ``L`` bases and a
window of ``W`` bases (0-based, half-open coordinates)::

    p     = pos - 1
    start = p - W // 2                      # GPN's run_vep: the variant at index W // 2
    end   = start + W                       # W bases for any W: W // 2 before the variant

and where ``[start, end)`` leaves the chromosome, the edge rule (``build variants --edge``)::

    shift     start = min(max(0, start), L - W)     # shifted inwards, W genome bases (default;
              end = start + W                       # pairs/windows.py: centred_start)
    pad       positions outside [0, L) read as N    # GPN, TraitGym, biofoundation: W bases,
                                                    # the variant at W // 2
    truncate  start = max(0, start), end = min(L, end)   # Evo 2's notebook: fewer bases

    reference = genome[start : end]         # upper case
    alternate = (genome[start : p] + alt + genome[p + len(ref) :])[: end - start]

so a deletion pulls the next genome bases in on the right (N past the end under ``pad``) and an
insertion pushes the last ones out: both windows have the same length, and for a causal model
every base before ``p`` is the same in both. ``window_start = start`` (negative when ``pad``
reaches before the chromosome), ``variant_offset = p - start``, ``is_clamped`` = the window
reached a chromosome end (shifted, padded or truncated). Odd ``W``: Evo 2's notebook and
biofoundation cut ``[p - W // 2, p + W // 2)``, ``W - 1`` bases; for the same windows as theirs use
an even ``W`` (8,192, as they do).

A variant is excluded (the reason counted, never silently) when its chromosome is not in the
FASTA (names match with or without a ``chr`` prefix, and ``MT`` matches ``chrM``) or, under
``shift``, is shorter than ``W``; its ALT is symbolic or a breakend (``<DEL>``, ``]1:5]A``), ``*``,
missing (``.``) or has a letter other than A/C/G/T (so has its REF); REF equals ALT; the position
lies past the chromosome's end; REF does not match the genome at ``p`` (compared in upper case;
never swapped); REF runs past the window; or, except under ``pad``, a deletion needs bases past
the chromosome's end. A file whose REF mismatches at most of its variants, and matches one base
over, is refused whole (:func:`check_positions`: 0-based or shifted positions).
"""

from __future__ import annotations

from dataclasses import dataclass

from perturbation_bench.dna import ACGT_ONLY
from perturbation_bench.errors import DataValidationError
from perturbation_bench.formats.fasta import resolve_chromosome
from perturbation_bench.pairs.conventions import EDGES
from perturbation_bench.pairs.windows import clamped_start


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
    if not ACGT_ONLY.match(ref) or not ACGT_ONLY.match(alt):
        return "non_acgt_allele"
    if ref == alt:
        return "ref_equals_alt"
    return None


def variant_windows(
    genome, chrom: str, pos: int, ref: str, alt: str, window: int, edge: str = "shift"
):
    """:class:`VariantWindows` for the variant under ``edge`` (module docstring), or the
    exclusion reason.

    Args:
        genome: a :class:`~perturbation_bench.formats.fasta.Genome` (upper-case bases).
        chrom: the FASTA's name of the chromosome.
    """
    length = genome.length(chrom)
    if edge == "shift" and length < window:
        return "chromosome_shorter_than_window"
    p = pos - 1
    if p + len(ref) > length:
        return "position_past_chromosome_end"
    if genome.fetch(chrom, p, p + len(ref)) != ref:
        return "ref_mismatch"
    centred = p - window // 2
    start, end = _window_span(centred, window, length, edge)
    if p + len(ref) > end:
        return "ref_longer_than_window"

    def bases(first: int, last: int) -> str:
        """``genome[first:last]``, N outside the chromosome (only ``pad`` reaches there)."""
        inside = genome.fetch(chrom, max(0, first), min(length, last)) if first < length else ""
        return "N" * max(0, -first) + inside + "N" * max(0, last - max(length, first))

    reference = bases(start, end)
    need = max(0, len(reference) - (p - start + len(alt)))
    after = p + len(ref)
    if edge != "pad" and after + need > length:
        return "deletion_past_chromosome_end"
    alternate = (reference[: p - start] + alt + bases(after, after + need))[: len(reference)]
    at_end = centred < 0 or centred + window > length
    return VariantWindows(reference, alternate, start, p - start, at_end)


def _window_span(centred: int, window: int, length: int, edge: str) -> tuple[int, int]:
    """``(start, end)`` of the window under ``edge`` (module docstring)."""
    if edge == "shift":
        start = clamped_start(centred, window, length)
        return start, start + window
    if edge == "pad":
        return centred, centred + window
    if edge == "truncate":
        return max(0, centred), min(length, centred + window)
    raise ValueError(f"unknown edge rule {edge!r}; rules: {', '.join(EDGES)}")


def add_arguments(parser) -> None:
    """The options of ``build variants``: its inputs and their format, the columns a table
    names otherwise, the window and its edge rule."""
    parser.add_argument(
        "--from",
        dest="source_format",
        choices=FORMATS,
        default="variants",
        help="the format of --variants: a VCF or table with chrom, pos, ref, alt (default); "
        "a MaveDB score table (HGVS g. variants); NABench assay CSVs (one assay each, no "
        "--fasta)",
    )
    parser.add_argument(
        "--variants",
        required=True,
        nargs="+",
        metavar="FILE",
        help="VCF (.vcf, .vcf.gz) or table (.parquet, .csv, .tsv) with chrom, pos (1-based), "
        "ref, alt; with --from nabench, one or more NABench CSVs",
    )
    parser.add_argument("--fasta", help="genome FASTA (plain or bgzip); not for --from nabench")
    parser.add_argument("--config", required=True, help="config name, e.g. traitgym_mendelian")
    parser.add_argument("--out", required=True, help="output folder (hub layout)")
    parser.add_argument("--window", type=int, default=8192, help="window bp (default %(default)s)")
    parser.add_argument(
        "--edge",
        choices=EDGES,
        default="shift",
        help="at a chromosome end: shift the window inwards (default), pad it "
        "with N (GPN, TraitGym), or truncate it (Evo 2)",
    )
    parser.add_argument("--label-column", metavar="COL", help="the table's label column")
    parser.add_argument(
        "--assay-column",
        metavar="COL",
        help="the table's assay column: each assay is scored apart, then macro-averaged",
    )
    parser.add_argument(
        "--label-direction",
        choices=("damaging", "functional"),
        help="what a higher quantitative label means: more damaging, or more function (a "
        "fitness or function score)",
    )
    parser.add_argument(
        "--hgvs-column", default="hgvs_nt", help="--from mavedb: the HGVS column (%(default)s)"
    )
    parser.add_argument(
        "--chrom",
        help="--from mavedb: the FASTA chromosome of the g. positions (else the accession)",
    )
    parser.add_argument(
        "--nabench-metadata",
        metavar="CSV",
        help="--from nabench: NABench's metadata.csv, the wild type of assays without one",
    )


FORMATS = ("variants", "mavedb", "nabench")
"""The input formats of ``build variants --from``."""


def check_positions(source, genome, named: list[tuple], read: int) -> None:
    """Refuse a file whose REF mismatches the FASTA at most of its ``read`` variants where, one
    base later or earlier, most of those REFs match: its positions are 0-based (this build reads
    1-based positions, as VCF) or shifted. ``named``: the excluded variants, ``(..., chrom, pos,
    ref, alt, reason)``.

    Raises:
        DataValidationError: naming the file, the counts and the shift.
    """
    mismatched = [row[-5:-1] for row in named if row[-1] == "ref_mismatch"]
    if 2 * len(mismatched) <= read:
        return
    for shift, meaning in ((1, "0-based positions"), (-1, "positions one base too far")):
        fits = sum(
            _ref_fits(genome, chrom, int(pos) + shift, ref) for chrom, pos, ref, _ in mismatched
        )
        if 2 * fits > len(mismatched):
            raise DataValidationError(
                f"{source}: REF does not match the FASTA at {len(mismatched)} of {read} variants, "
                f"and {fits} of those match one base {'later' if shift > 0 else 'earlier'}: "
                f"{meaning}? This build reads 1-based positions, as VCF does "
                f"({'add' if shift > 0 else 'subtract'} 1 to every position)"
            )


def _ref_fits(genome, chrom: str, pos: int, ref: str) -> bool:
    """Whether ``ref`` is the genome's bases at 1-based ``pos`` of ``chrom`` (its FASTA name
    resolved as the build resolves it)."""
    name = resolve_chromosome(chrom, genome)
    start = pos - 1
    return (
        name is not None
        and 0 <= start
        and start + len(ref) <= genome.length(name)
        and (genome.fetch(name, start, start + len(ref)) == ref)
    )
