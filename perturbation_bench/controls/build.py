"""``perturbation-bench build controls``: one pair per element, its window against the same
window with only the element's bases shuffled (DART-Eval's paired control).

For an element ``[start, end)`` on a chromosome of ``L`` bases and a window of ``W`` bases::

    window_start = centred_start((start + end) // 2, W, L)    # shifted inwards at the ends
    shuffled     = [max(start, window_start), min(end, window_start + W))
    original     = genome[window_start : window_start + W]    # upper case
    perturbed    = original with the bases of ``shuffled`` shuffled (controls/shuffles.py)

so an element longer than ``W`` is shuffled within the window only, and the flanks are the
genome's in both. ``element_start``/``element_end`` record ``shuffled`` (genome coordinates).
``--strands``: ``forward`` (default: both windows as the genome's forward strand reads them),
``both`` (each element also reverse-complemented, a second row), or ``random`` (one orientation
per element drawn from its generator, DART-Eval's setting).

A BED region whose chromosome is not in the FASTA, or that ends past its chromosome's end, is
refused, naming its line. An element from an annotation is excluded, its reason counted, when its
chromosome is not in the FASTA; one that runs past either end of its chromosome (a promoter) is
cut there and counted (``cut_at_chromosome_ends``). Any element is excluded, its reason counted,
when its chromosome is shorter than ``W``, it is shorter than 3 bp (after the cut), holds a base
other than A/C/G/T, its shuffle returns it unchanged :data:`TRIES` times, or its pair repeats an
earlier one.
Elements read = written + excluded; rows = elements written x orientations. The build report
counts the rows with no unshuffled flank (``no_unshuffled_flank``: the element fills the window,
so the pair compares the element's bases alone).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from perturbation_bench import __version__
from perturbation_bench.controls.shuffles import element_rng, shuffle
from perturbation_bench.dna import BASES, reverse_complement
from perturbation_bench.errors import DataValidationError
from perturbation_bench.formats.fasta import resolve_chromosome
from perturbation_bench.pairs.fields import ORIGINAL, PERTURBED
from perturbation_bench.pairs.layout import (
    config_folder,
    unique_pairs,
    write_excluded,
    write_pairs,
    write_report,
)
from perturbation_bench.pairs.windows import centred_start
from perturbation_bench.wording import tally

TRIES = 10
MIN_ELEMENT = 3


def control_pair(
    genome, element, chrom: str, window: int, kind: str, seed: int, strands: str = "forward"
) -> dict | str:
    """The pair of one element (module docstring) as the forward strand reads it, its ``strand``
    ``-`` when ``strands`` is ``random`` and the draw says so; or the exclusion reason."""
    length = genome.length(chrom)
    if length < window:
        return "chromosome_shorter_than_window"
    start, end = max(0, element.start), min(element.end, length)
    if end - start < MIN_ELEMENT:
        return "element_shorter_than_3bp"
    window_start = int(centred_start((start + end) // 2, window, length))
    first, last = max(start, window_start), min(end, window_start + window)
    original = genome.fetch(chrom, window_start, window_start + window)
    bases = original[first - window_start : last - window_start]
    if set(bases) - set(BASES):
        return "element_not_acgt"
    rng = element_rng(seed, element.chrom, start, element.end)
    for _ in range(TRIES):
        shuffled = shuffle(bases, kind, rng)
        if shuffled != bases:
            break
    else:
        return "shuffle_unchanged"
    perturbed = original[: first - window_start] + shuffled + original[last - window_start :]
    strand = "-" if strands == "random" and rng.random() < 0.5 else "+"
    return {
        "benchmark_id": element.name,
        "element_name": element.name,
        "chrom": element.chrom,
        "window_start": window_start,
        "element_start": first,
        "element_end": last,
        "strand": strand,
        "shuffle": kind,
        "random_seed": seed,
        ORIGINAL: original,
        PERTURBED: perturbed,
    }


def oriented(pair: dict, strands: str) -> list[dict]:
    """The rows of one pair (read on the forward strand) under ``--strands``: a ``-`` row holds
    both windows reverse-complemented."""
    flipped = {
        **pair,
        "strand": "-",
        "benchmark_id": f"{pair['benchmark_id']}:-",
        ORIGINAL: reverse_complement(pair[ORIGINAL]),
        PERTURBED: reverse_complement(pair[PERTURBED]),
    }
    if strands == "both":
        return [{**pair, "benchmark_id": f"{pair['benchmark_id']}:+"}, flipped]
    return [flipped if pair["strand"] == "-" else pair]


def fills_window(row: dict) -> bool:
    """Whether a row's shuffled element spans its whole window (no unshuffled flank)."""
    return row["element_start"] == row["window_start"] and row["element_end"] == (
        row["window_start"] + len(row[ORIGINAL])
    )


def _checked_chromosome(genome, element) -> str | None:
    """The FASTA's name of an element's chromosome, None where the FASTA lacks it. A BED
    region (its source names a line) on a chromosome the FASTA lacks, or past its end, is
    refused naming the file, the line and the region; an annotation's element is excluded or
    cut there instead."""
    chrom = resolve_chromosome(element.chrom, genome.names)
    if " line " not in element.source:
        return chrom
    if chrom is None:
        raise DataValidationError(
            f"{element.source}: chromosome {element.chrom!r} is not "
            f"in {genome.path} ({', '.join(genome.names[:5])}, ...)"
        )
    if element.end > genome.length(chrom):
        raise DataValidationError(
            f"{element.source}: {element.name} ends at {element.end}, past the end "
            f"of {chrom} ({genome.length(chrom)} bp) in {genome.path}"
        )
    return chrom


def build_controls(
    genome, elements, kind: str, window: int, seed: int, strands: str, config: str, out
) -> tuple[Path, dict]:
    """Write ``out/<config>/test-00000-of-00001.parquet``, ``_build_report.json`` and
    ``_excluded.tsv``; return the parquet path and the build report (counts and settings).

    Raises:
        DataValidationError: a BED region on a chromosome the FASTA lacks or past its end
            (file, line, name); no element made a pair.
    """
    from tqdm import tqdm

    excluded, named, cut_at_ends = Counter(), [], [0]

    def pairs():
        for element in tqdm(elements, desc="controls", unit="element"):
            chrom = _checked_chromosome(genome, element)
            if chrom is not None and (element.start < 0 or element.end > genome.length(chrom)):
                cut_at_ends[0] += 1
            pair = (
                "chromosome_not_in_fasta"
                if chrom is None
                else control_pair(genome, element, chrom, window, kind, seed, strands)
            )
            if isinstance(pair, str):
                excluded[pair] += 1
                named.append((element.name, element.chrom, element.start, element.end, pair))
                continue
            yield pair

    def on_duplicate(pair):
        named.append(
            (
                pair["element_name"],
                pair["chrom"],
                pair["element_start"],
                pair["element_end"],
                "duplicate_pair",
            )
        )

    rows = [
        row
        for pair in unique_pairs(pairs(), excluded, "controls", on_duplicate)
        for row in oriented(pair, strands)
    ]
    if not rows:
        raise DataValidationError(
            f"no element made a pair ({len(elements)} read; excluded: {tally(excluded)})"
        )
    folder = config_folder(out, config)
    path, _ = write_pairs(folder, rows)
    report = {
        "read": len(elements),
        "written_elements": len(elements) - sum(excluded.values()),
        "written_rows": len(rows),
        "excluded": dict(sorted(excluded.items())),
        "cut_at_chromosome_ends": cut_at_ends[0],
        "no_unshuffled_flank": sum(map(fills_window, rows)),
        "settings": {
            "fasta": str(genome.path),
            "config": config,
            "window": window,
            "shuffle": kind,
            "seed": seed,
            "strands": strands,
            "script_version": f"perturbation-bench {__version__}",
        },
    }
    write_report(folder, report)
    write_excluded(folder, ("element", "chrom", "start", "end", "reason"), named)
    return path, report
