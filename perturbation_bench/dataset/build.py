"""Build a perturbation-bench dataset from a genome FASTA and a GTF annotation.

One candidate pair per CDS exon of the chosen transcript of each gene (see
``formats/annotation.py``). All coordinates are 0-based, half-open; ``*_in_seq`` positions index the
oriented sequence.

Window. ``window`` bp (default 8,192) oriented 5'->3' on the transcript's strand (reverse
complement on the minus strand), starting ``flank`` bp (default 1,024) upstream of the CDS
exon's 5' end. At a chromosome end the window is shifted inwards to stay whole and the row gets
``is_clamped = 1``; ``upstream_actual`` is the real number of bases before the CDS part. The CDS
part of the window is ``[cds_start_in_seq, cds_end_in_seq)``, cut at the window's end for long
exons. The GTF phase gives the first complete codon at ``cds_start_in_seq + phase``; ``frame``
is that position modulo 3. Sequences are upper-cased.

syn. Every complete codon of the CDS part that codes for neither M, W nor stop is eligible and
is replaced by its amino acid's most frequent codon (``codons.py``); with
``optimization_rate < 1`` only ``round(rate * n_eligible)`` eligible codons, drawn with a
per-row seeded generator, are. With ``recode = "shuffle"`` (the codon control) the eligible
codons are instead permuted among the positions of their own amino acid by the row's
generator (up to :data:`SHUFFLE_TRIES` draws until one differs): protein, codon counts and base
composition unchanged, only the order of synonymous codons. The protein is unchanged by
construction. The patch is the span of complete codons; ``fraction_codons_changed =
n_codons_changed / n_codons_total`` (codons whose text changed).

motif. ``repeats`` copies of ``motif`` (default CAG x 10 = 30 bp) replace the bases starting
``offset`` bp (default 60) after the first complete codon, so the patch is codon-aligned.

Excluded, counted per reason and written to ``_build_report.json`` beside the parquet:
``chromosome_not_in_fasta``, ``chromosome_shorter_than_window``, ``phase_inconsistent`` (the
GTF phase does not continue the previous exons' frame), ``n_in_patch`` (a base other than ACGT
in the bases to be changed), ``cds_too_short`` (no complete codon, or the motif does not fit
inside the CDS part), ``no_change`` (the perturbed sequence equals the original),
``duplicate_pair`` (the same pair as an earlier row, e.g. two genes sharing the exon), and
``over_max_pairs``: ``max_pairs`` keeps a seeded uniform sample (reservoir sampling, in genome
order) of the rest. Same inputs and seed, same bytes. Rows stream to the parquet file in
batches; the genome is read window by window; memory holds the annotation's CDS records and at
most one batch (or the ``max_pairs`` sample).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa

from perturbation_bench.dataset.codons import CodonTable
from perturbation_bench.dataset.schema import SCHEMAS
from perturbation_bench.dataset.settings import RECODINGS, BuildSettings
from perturbation_bench.dna import BASES
from perturbation_bench.errors import DataValidationError
from perturbation_bench.formats.annotation import CdsExon
from perturbation_bench.formats.fasta import Genome
from perturbation_bench.pairs.layout import config_folder, unique_pairs, write_pairs, write_report
from perturbation_bench.pairs.windows import clamped_start
from perturbation_bench.wording import tally

DNA = frozenset(BASES)
SHUFFLE_TRIES = 10


@dataclass(frozen=True)
class Window:
    """Where an exon's window lies on the genome and where its CDS part lies in the sequence."""

    start: int
    end: int
    upstream: int
    clamped: bool
    cds_start: int
    cds_end: int


def place_window(exon: CdsExon, chrom_length: int, window: int, flank: int) -> Window:
    """The window for ``exon`` (module docstring); the chromosome must be at least ``window`` long."""
    minus = exon.strand == "-"
    ideal = exon.end + flank - window if minus else exon.start - flank
    start = clamped_start(ideal, window, chrom_length)
    end, clamped = start + window, start != ideal
    upstream = end - exon.end if minus else exon.start - start
    return Window(start, end, upstream, clamped, upstream, min(window, upstream + exon.length))


def recode_synonymous(
    sequence: str,
    first: int,
    cds_end: int,
    table: CodonTable,
    rate: float,
    rng: random.Random,
    recode: str = "most_frequent",
) -> tuple[str, int, int, int] | str:
    """Recode the complete codons in ``[first, cds_end)`` by ``recode`` (module docstring).

    Returns:
        ``(perturbed, n_total, n_eligible, n_changed)``, or an exclusion reason.
    """
    starts = range(first, cds_end - 2, 3)
    codons = [sequence[i : i + 3] for i in starts]
    if not codons:
        return "cds_too_short"
    if any(not DNA.issuperset(codon) for codon in codons):
        return "n_in_patch"
    eligible = [k for k, codon in enumerate(codons) if table.is_eligible(codon)]
    if recode == "shuffle":
        recoded = shuffle_synonymous(codons, eligible, table, rng)
    else:
        if rate < 1:
            eligible = sorted(rng.sample(eligible, round(rate * len(eligible))))
        recoded = list(codons)
        for k in eligible:
            recoded[k] = table.most_frequent_synonym(codons[k])
    changed = sum(a != b for a, b in zip(codons, recoded, strict=True))
    if not changed:
        return "no_change"
    perturbed = sequence[:first] + "".join(recoded) + sequence[first + 3 * len(codons) :]
    return perturbed, len(codons), len(eligible), changed


def shuffle_synonymous(
    codons: list[str], eligible: list[int], table: CodonTable, rng: random.Random
) -> list[str]:
    """``codons`` with those at ``eligible`` permuted among the positions of their own amino acid;
    the first draw that changes a codon, else (after :data:`SHUFFLE_TRIES`) ``codons`` as given."""
    by_amino_acid: dict[str, list[int]] = {}
    for k in eligible:
        by_amino_acid.setdefault(table.code[codons[k]], []).append(k)
    for _ in range(SHUFFLE_TRIES):
        shuffled = list(codons)
        for positions in by_amino_acid.values():
            drawn = [codons[k] for k in positions]
            rng.shuffle(drawn)
            for k, codon in zip(positions, drawn, strict=True):
                shuffled[k] = codon
        if shuffled != codons:
            return shuffled
    return list(codons)


def candidate_rows(
    genome: Genome,
    exons: list[CdsExon],
    settings: BuildSettings,
    table: CodonTable | None,
    excluded: Counter,
) -> Iterator[dict]:
    """Yield the row of every exon that passes, in exon order; count the others in ``excluded``."""
    from tqdm import tqdm

    for exon in tqdm(exons, desc=f"building {settings.config}", unit="exon"):
        row = _row(genome, exon, settings, table)
        if isinstance(row, str):
            excluded[row] += 1
        else:
            yield row


def seeded_sample(rows: Iterator[dict], size: int, seed: int, excluded: Counter) -> list[dict]:
    """A uniform random sample of ``size`` rows (reservoir sampling), in input order.

    Holds at most ``size`` rows in memory; rows left out are counted as ``over_max_pairs``.
    """
    rng = random.Random(seed)
    reservoir: list[tuple[int, dict]] = []
    seen = 0
    for seen, row in enumerate(rows, start=1):
        if len(reservoir) < size:
            reservoir.append((seen, row))
        elif (slot := rng.randrange(seen)) < size:
            reservoir[slot] = (seen, row)
    if seen > size:
        excluded["over_max_pairs"] = seen - size
    return [row for _, row in sorted(reservoir, key=lambda item: item[0])]


def _row(genome: Genome, exon: CdsExon, settings: BuildSettings, table: CodonTable | None):
    if exon.chrom not in genome:
        return "chromosome_not_in_fasta"
    chrom_length = genome.length(exon.chrom)
    if chrom_length < settings.window:
        return "chromosome_shorter_than_window"
    if exon.phase != exon.expected_phase:
        return "phase_inconsistent"
    window = place_window(exon, chrom_length, settings.window, settings.flank)
    original = genome.fetch(exon.chrom, window.start, window.end, exon.strand)
    first = window.cds_start + exon.phase
    common = {
        "benchmark_id": f"{settings.config}:{exon.transcript_id}:exon{exon.exon_rank}",
        "script_version": settings.script_version,
        "annotation_source": settings.annotation_source,
        "genome_assembly": settings.genome_assembly,
        "species": settings.species,
        "chr": exon.chrom,
        "strand": exon.strand,
        "transcript_id": exon.transcript_id,
        "gene_id": exon.gene_id,
        "gene_name": exon.gene_name,
        "original_sequence": original,
        "random_seed": settings.seed,
        "chrom_length": chrom_length,
        "cds_genome_start": exon.start,
        "cds_genome_end": exon.end,
        "window_genome_start": window.start,
        "window_genome_end": window.end,
        "upstream_actual": window.upstream,
        "is_clamped": int(window.clamped),
        "exon_rank": exon.exon_rank,
        "is_first_exon": int(exon.exon_rank == 1),
        "frame": first % 3,
        "phase_gtf": exon.phase,
        "cds_start_in_seq": window.cds_start,
        "cds_end_in_seq": window.cds_end,
        "cds_length": exon.length,
    }
    if settings.kind == "syn":
        rng = random.Random(f"{settings.seed}:{exon.transcript_id}:{exon.exon_rank}")
        result = recode_synonymous(
            original, first, window.cds_end, table, settings.optimization_rate, rng, settings.recode
        )
        if isinstance(result, str):
            return result
        perturbed, total, eligible, changed = result
        return {
            **common,
            "sequence": perturbed,
            "codon_usage_source": table.source,
            "recoding_mode": RECODINGS[settings.recode],
            "optimization_rate": settings.optimization_rate,
            "fraction_codons_changed": changed / total,
            "window_size_bp": settings.window,
            "downstream_actual": settings.window - window.cds_end,
            "patch_start_in_seq": first,
            "patch_end_in_seq": first + 3 * total,
            "patch_length": 3 * total,
            "n_codons_total": total,
            "n_codons_eligible": eligible,
            "n_codons_changed": changed,
        }
    repeat = settings.motif * settings.repeats
    patch_start = first + settings.offset
    patch_end = patch_start + len(repeat)
    if patch_end > window.cds_end:
        return "cds_too_short"
    if not DNA.issuperset(original[patch_start:patch_end]):
        return "n_in_patch"
    if original[patch_start:patch_end] == repeat:
        return "no_change"
    return {
        **common,
        "sequence": original[:patch_start] + repeat + original[patch_end:],
        "motif": settings.motif,
        "actual_motif": repeat,
        "upstream_flank_bp": settings.flank,
        "patch_len_bp": len(repeat),
        "start_after_bp": settings.offset,
        "patch_start_in_cds": patch_start - window.cds_start,
        "patch_end_in_cds": patch_end - window.cds_start,
        "patch_start_in_seq": patch_start,
        "patch_end_in_seq": patch_end,
    }


def build_dataset(
    genome: Genome,
    exons: list[CdsExon],
    settings: BuildSettings,
    table: CodonTable | None,
    out: Path,
) -> tuple[Path, int, Counter]:
    """Write ``out/<config>/test-00000-of-00001.parquet`` and ``_build_report.json``.

    Rows are written in batches as they are made (or, with ``max_pairs``, once the sample is
    drawn), so memory holds at most one batch or the sample, never the whole dataset.

    Returns:
        The parquet path, the number of rows written, and the exclusion counts.

    Raises:
        DataValidationError: no exon made a pair (the reasons counted in the build report).
    """
    folder = config_folder(out, settings.config)
    excluded: Counter = Counter()
    rows = unique_pairs(
        candidate_rows(genome, exons, settings, table, excluded), excluded, settings.kind
    )
    if settings.max_pairs is not None:
        rows = iter(seeded_sample(rows, settings.max_pairs, settings.seed, excluded))
    schema = SCHEMAS[settings.kind]
    path, written = write_pairs(
        folder, rows, lambda batch, _: pa.Table.from_pylist(batch, schema=schema)
    )
    report = {
        "written": written,
        "excluded": dict(sorted(excluded.items())),
        "settings": asdict(settings),
    }
    report_path = write_report(folder, report)
    if not written:  # and no file: no empty dataset for a task to pick up
        raise DataValidationError(
            f"{settings.config}: no pair to write from {len(exons)} CDS exons (excluded: "
            f"{tally(excluded)}); the counts are in {report_path}"
        )
    return path, written, excluded
