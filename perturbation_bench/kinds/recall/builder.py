"""``perturbation-bench build recall``: recall-bench's repeat and control windows from a genome.

For each distance ``d`` of ``--distances`` and each trial ``t < --trials``, one row
(``rules.py`` states the windows and the draws)::

    context_repeat    lead + A' + D          (A' the earlier copy of A: --copy)
    context_control   lead + C  + D          (C: --control)
    target            A                      (the --segment bases scored)
    distance, copy, control, trial, target_bp, window_bp, align, random_seed, benchmark_id

Windows are drawn from the genome's N-free stretches (every maximal run of A/C/G/T, upper
case). A distance whose window is longer than the longest stretch is excluded with all its
trials, and a trial whose control piece equals the copy (a genome repeat of period ``s + d``
under ``--control native``: its copy advantage is 0 by construction) is excluded alone, and so
is a trial that drew the same target and contexts as an earlier one (``duplicate_pair``, by the
kind's pair identity, ``shape.py``: a small or repetitive genome, many trials), each counted
in ``_excluded.tsv`` by distance and reason; rows read = distances x trials = written +
excluded.
``--align K`` rounds every piece to whole K-mers (``rules.piece_lengths``; 6 for the 6-mer
presets), so a preset that reads K-mers tokenizes the target the same after both contexts; the
build holds each row to the kind's invariants (``invariants.py``, as ``validate`` does).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.kinds.recall import rules
from perturbation_bench.kinds.recall.invariants import copy_span, invariants
from perturbation_bench.kinds.recall.shape import SHAPE


def add_arguments(parser) -> None:
    """The options of ``build recall``."""
    parser.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    parser.add_argument("--out", required=True, help="output folder (hub layout)")
    parser.add_argument("--config", required=True, help="config name, e.g. recall_yeast")
    parser.add_argument(
        "--distances",
        default=",".join(map(str, rules.DISTANCES)),
        help="bases between the copy and the target, comma-separated (default 64 .. 262144)",
    )
    parser.add_argument(
        "--segment",
        type=int,
        default=rules.SEGMENT,
        help="target length in bp (default %(default)s)",
    )
    parser.add_argument(
        "--trials", type=int, default=rules.TRIALS, help="rows per distance (default %(default)s)"
    )
    parser.add_argument(
        "--copy",
        default="exact",
        help="the earlier copy: exact, mutate:P or revcomp (default %(default)s)",
    )
    parser.add_argument(
        "--control",
        choices=rules.CONTROLS,
        default="native",
        help="C's origin (default %(default)s)",
    )
    parser.add_argument(
        "--align",
        type=int,
        default=1,
        help="round every piece to whole K-mers (6 for the 6-mer presets; default %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")


def distances(text: str) -> tuple[int, ...]:
    """``--distances``: whole numbers of at least 1, in order, each once.

    Raises:
        OptionsError: any other value, or one given twice.
    """
    values = []
    for item in (part.strip() for part in text.split(",")):
        if not item.isdigit() or int(item) < 1:
            raise OptionsError(f"--distances: {item!r} is not a whole number of at least 1")
        if int(item) in values:
            raise OptionsError(f"--distances: {item} is given twice")
        values.append(int(item))
    return tuple(values)


def check_rounding(wanted, segment: int, align: int) -> None:
    """Refuse distances that ``--align`` rounds to one (``rules.piece_lengths``): their rows
    would be one distance under two names.

    Raises:
        OptionsError: naming the distances and what they round to.
    """
    rounded: dict[int, int] = {}
    for distance in wanted:
        to = rules.piece_lengths(distance, segment, align)[2]
        if to in rounded:
            raise OptionsError(
                f"--distances {rounded[to]} and {distance} both round to {to} bp with --align "
                f"{align}: give one of them"
            )
        rounded[to] = distance


def n_free_stretches(genome) -> list[str]:
    """Every maximal run of A/C/G/T of ``genome`` (``formats/fasta.Genome``), in file order."""
    import re

    return [
        match.group()
        for name in genome.names
        for match in re.finditer("[ACGT]+", genome.fetch(name, 0, genome.length(name)))
    ]


def check_row(row: dict) -> None:
    """Hold a row to the kind's invariants (``invariants.py``) as it is written.

    Raises:
        DataValidationError: naming the row and the first invariant it breaks.
    """
    for check in invariants():
        if not check.holds(row):
            raise DataValidationError(f"recall row {row['benchmark_id']}: breaks {check.name}")


TOO_LONG = "window_longer_than_longest_n_free_stretch"
CONTROL_IS_COPY = "control_equals_copy"
DUPLICATE = "duplicate_pair"
"""The reasons a build excludes rows (module docstring)."""


def recall_rows(stretches, wanted, trials, segment, copy, rate, control, align, seed, excluded):
    """Every row of each distance of ``wanted`` (module docstring); the rows excluded are
    counted in ``excluded`` ((distance, reason) -> rows) and skipped."""
    import numpy as np
    from tqdm import tqdm

    copy_name = f"mutate:{rate:g}" if copy == "mutate" else copy
    seen: set[str] = set()
    for distance in tqdm(wanted, desc="recall", unit="distance"):
        lengths = rules.piece_lengths(distance, segment, align)
        window = rules.window_bp(distance, segment)
        if sum(lengths) + lengths[1] > stretches.longest():
            excluded[distance, TOO_LONG] = trials
            continue
        rng = np.random.default_rng([seed, window, distance])
        aux = np.random.default_rng([seed, window, distance, 1])
        for trial in range(trials):
            row = {
                "benchmark_id": f"recall:{distance}:{trial}",
                **rules.trial_windows(stretches, rng, aux, lengths, copy, rate, control),
                "distance": lengths[2],
                "copy": copy_name,
                "control": control,
                "trial": trial,
                "target_bp": lengths[1],
                "window_bp": sum(lengths) + lengths[1],
                "align": align,
                "random_seed": seed,
            }
            start, end = copy_span(row)
            if row["context_repeat"][start:end] == row["context_control"][start:end]:
                excluded[distance, CONTROL_IS_COPY] += 1
                continue
            pair = SHAPE.row_pair_id(row)
            if pair in seen:
                excluded[distance, DUPLICATE] += 1
                continue
            seen.add(pair)
            check_row(row)
            yield row


def rounding(distances, segment: int, align: int) -> str:
    """``--segment 3 -> 6, distance 64 -> 60, ...``: each piece length ``align`` changes
    (``rules.piece_lengths``); empty where none changes."""
    lengths = [("--segment", segment), *(("distance", distance) for distance in distances)]
    return ", ".join(
        f"{name} {length} -> {rules.round_to(length, align)}"
        for name, length in lengths
        if rules.round_to(length, align) != length
    )


def rows_by_distance(excluded: Counter, distances, trials: int) -> dict[int, int]:
    """The rows written per distance asked: its trials less those ``excluded`` counts."""
    out = dict.fromkeys(distances, trials)
    for (distance, _), rows in excluded.items():
        out[distance] -= rows
    return out


def by_reasons(excluded: Counter) -> dict[str, int]:
    """The rows ``excluded`` ((distance, reason) -> rows) counts, per reason."""
    counts: Counter = Counter()
    for (_, reason), rows in excluded.items():
        counts[reason] += rows
    return dict(counts)


def build_recall(stretches, settings: dict, out) -> tuple[Path, dict]:
    """Write ``out/<config>/test-00000-of-00001.parquet``, ``_build_report.json`` and
    ``_excluded.tsv``; return the parquet path and the build report. ``settings``: ``config``,
    ``distances``, ``segment``, ``trials``, ``copy`` (as ``--copy`` takes it), ``control``,
    ``align``, ``seed``.

    Raises:
        OptionsError: a copy, control, segment, trial count or alignment out of range.
        DataValidationError: no row was made (every row excluded), naming the reasons.
    """
    from perturbation_bench import __version__
    from perturbation_bench.pairs.layout import (
        config_folder,
        write_excluded,
        write_pairs,
        write_report,
    )

    try:
        copy, rate = rules.parse_copy(settings["copy"])
    except ValueError as err:
        raise OptionsError(str(err)) from None
    segment, trials, align = settings["segment"], settings["trials"], settings["align"]
    if settings["control"] not in rules.CONTROLS:
        raise OptionsError(f"--control {settings['control']!r}: native or foreign")
    for name, value in (("--segment", segment), ("--trials", trials), ("--align", align)):
        if value < 1:
            raise OptionsError(f"{name} must be at least 1, got {value}")
    check_rounding(settings["distances"], segment, align)
    excluded: Counter = Counter()
    folder = config_folder(out, settings["config"])
    rows = recall_rows(
        stretches, settings["distances"], trials, segment, copy, rate, settings["control"], align,
        settings["seed"], excluded,
    )  # fmt: skip
    path, written = write_pairs(folder, rows)
    read = len(settings["distances"]) * trials
    by_reason = by_reasons(excluded)
    if not written:
        raise DataValidationError(
            f"no recall row was made: {', '.join(f'{n} {r}' for r, n in by_reason.items())} (the "
            f"genome's longest N-free stretch: {stretches.longest()} bp)"
        )
    report = {
        "read": read,
        "written_rows": written,
        "rows_by_distance": rows_by_distance(excluded, settings["distances"], trials),
        "excluded": by_reason,
        "longest_stretch_bp": stretches.longest(),
        "settings": {
            **{k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()},
            "script_version": f"perturbation-bench {__version__}",
        },
    }
    write_report(folder, report)
    write_excluded(
        folder, ("distance", "rows", "reason"), [(d, n, r) for (d, r), n in excluded.items()]
    )
    return path, report
