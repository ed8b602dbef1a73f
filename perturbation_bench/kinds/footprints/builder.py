"""``perturbation-bench build footprints``: DART-Eval's motif footprinting pairs, with doses.

For each background window ``B`` of ``L`` bases (``formats/backgrounds.py``), each motif of
consensus ``c`` of ``w`` bases (``formats/meme.py``), each copy number ``n`` and spacing ``s``, the
insert of ``n`` copies ``s`` bases apart sits at the centre of ``B`` and replaces its bases there,
by the rule of ``kinds/footprints/rules.py`` (the spacers between copies keep the background's). One
row holds::

    original_sequence     B with c at every copy            (the motif)
    sequence              B with q at every copy            (its control)
    background_sequence   B                                 (the raw background)

where ``q`` is a uniform permutation of the bases of ``c`` other than ``c`` itself, drawn again
until it differs, from a generator seeded by ``(seed, motif, background)``
(``pairs/identity.keyed_rng``): one ``q`` per motif and background, the same at every dose and
orientation, so doses differ in the number and the spacing of copies alone (one copy has no spacing:
its rows say 0). ``--orientation``: ``forward`` (the windows as given), ``reverse`` (all three
reverse-complemented) or ``both`` (a row of each, DART-Eval's setting, its reverse strand).
``insert_start``/``insert_end`` locate the insert in the row's own windows.

A motif of one base (no permutation differs from it) is excluded with every row, a (background,
dose) whose insert is longer than the background is excluded, and so is a pair that repeats an
earlier one; each is counted by reason (in rows) and named in ``_excluded.tsv``. Rows read =
backgrounds x motifs x doses x orientations = written + excluded.

``--max-backgrounds N`` uses N of the ``n`` backgrounds read, spread evenly over them in input
order (indices ``floor(i n / N)``, i = 0 .. N - 1; DART-Eval takes 100 of its task-1
negatives); the report says how many were read and how many used.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from perturbation_bench.errors import OptionsError
from perturbation_bench.kinds.footprints.rules import DOSE_AXES, dose_of, insert_starts, with_copies
from perturbation_bench.kinds.footprints.shape import BACKGROUND
from perturbation_bench.pairs.fields import ORIGINAL, PERTURBED

ORIENTATIONS = ("forward", "reverse", "both")


def add_arguments(parser) -> None:
    """The options of ``build footprints``: motifs, backgrounds, doses, orientation."""
    parser.add_argument("--motifs", required=True, help="MEME file of motifs (e.g. HOCOMOCO v12)")
    parser.add_argument(
        "--backgrounds",
        help="background windows: a FASTA, a .txt of one sequence per line (DART-Eval's), or a "
        "config folder of 'build controls'",
    )
    parser.add_argument(
        "--bed", help="background windows: the regions of a BED file (with --fasta)"
    )
    parser.add_argument("--fasta", help="with --bed: the genome FASTA (plain or bgzip)")
    parser.add_argument(
        "--copies",
        default="1",
        help="copy numbers of the insert, comma-separated (default %(default)s)",
    )
    parser.add_argument(
        "--spacing", default="0", help="bases between copies, comma-separated (default %(default)s)"
    )
    parser.add_argument(
        "--orientation",
        choices=ORIENTATIONS,
        default="both",
        help="forward, reverse or both strands of every window (default %(default)s, DART-Eval's)",
    )
    parser.add_argument(
        "--max-backgrounds",
        type=int,
        help="use at most N backgrounds, spread evenly over those read (DART-Eval uses 100)",
    )
    parser.add_argument("--config", required=True, help="config name, e.g. footprints_h12core")
    parser.add_argument("--out", required=True, help="output folder (hub layout)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")


def doses(text: str, option: str, least: int) -> tuple[int, ...]:
    """A comma-separated list of whole numbers of at least ``least``, in order, once each.

    Raises:
        OptionsError: a value that is not a whole number or is below ``least``.
    """
    values = []
    for item in (part.strip() for part in text.split(",")):
        if not item.lstrip("-").isdigit() or int(item) < least:
            raise OptionsError(f"{option}: {item!r} is not a whole number of at least {least}")
        values.append(int(item))
    return tuple(dict.fromkeys(values))


def spread_evenly(backgrounds: list, most: int | None) -> list:
    """At most ``most`` (1 or more) of ``backgrounds``, spread evenly in input order (module
    docstring); all of them when ``most`` is None or not below their number."""
    n = len(backgrounds)
    if most is None or most >= n:
        return list(backgrounds)
    return [backgrounds[i * n // most] for i in range(most)]


def control_insert(consensus: str, rng) -> str:
    """A uniform permutation of ``consensus`` that differs from it (module docstring); the
    consensus must hold two bases at least."""
    while True:
        permuted = "".join(rng.permutation(list(consensus)))
        if permuted != consensus:
            return permuted


def footprint_rows(background, motif, control: str, dose: tuple[int, int], seed, orientation):
    """The rows of one motif and dose in one background (module docstring), or None when the
    insert does not fit."""
    from perturbation_bench.dna import reverse_complement

    copies, spacing = dose
    starts = insert_starts(len(background.sequence), len(motif.consensus), copies, spacing)
    if starts is None:
        return None
    end = starts[-1] + len(motif.consensus)
    forward = {
        "benchmark_id": f"{motif.name}:{background.name}:{copies}x{spacing}",
        "background_id": background.name,
        "motif": motif.name,
        "consensus": motif.consensus,
        "control_insert": control,
        "copies": copies,
        "spacing": spacing,
        "orientation": "forward",
        "insert_start": starts[0],
        "insert_end": end,
        "random_seed": seed,
        ORIGINAL: with_copies(background.sequence, motif.consensus, starts),
        PERTURBED: with_copies(background.sequence, control, starts),
        BACKGROUND.column: background.sequence,
    }
    length = len(background.sequence)
    reverse = {
        **forward,
        "benchmark_id": f"{forward['benchmark_id']}:-",
        "orientation": "reverse",
        "insert_start": length - end,
        "insert_end": length - starts[0],
        **{
            name: reverse_complement(forward[name])
            for name in (ORIGINAL, PERTURBED, BACKGROUND.column)
        },
    }
    forward["benchmark_id"] += ":+"
    return {"forward": [forward], "reverse": [reverse], "both": [forward, reverse]}[orientation]


def build_footprints(
    motifs,
    backgrounds,
    copies,
    spacings,
    orientation: str,
    seed: int,
    config: str,
    out,
    motifs_file: str | None = None,
    max_backgrounds: int | None = None,
) -> tuple[Path, dict]:
    """Write ``out/<config>/test-00000-of-00001.parquet``, ``_build_report.json`` and
    ``_excluded.tsv``; return the parquet path and the build report (counts and settings).

    Raises:
        OptionsError: an orientation not in :data:`ORIENTATIONS`.
        DataValidationError: no row was made.
    """

    from perturbation_bench import __version__
    from perturbation_bench.errors import DataValidationError
    from perturbation_bench.pairs.layout import (
        config_folder,
        unique_pairs,
        write_excluded,
        write_pairs,
        write_report,
    )
    from perturbation_bench.wording import tally

    if orientation not in ORIENTATIONS:
        raise OptionsError(f"--orientation {orientation!r}: one of {', '.join(ORIENTATIONS)}")
    backgrounds_read = len(backgrounds)
    backgrounds = spread_evenly(backgrounds, max_backgrounds)
    strands = 2 if orientation == "both" else 1
    dose_list = list(dict.fromkeys((n, s if n > 1 else 0) for n in copies for s in spacings))
    excluded = _Excluded()
    usable = [motif for motif in motifs if len(set(motif.consensus)) > 1]
    for motif in motifs:
        if len(set(motif.consensus)) == 1:
            reason = "one_base_consensus_no_permutation_differs"
            for dose in dose_list:
                excluded.add(motif.name, "*", dose, reason, len(backgrounds) * strands)

    folder = config_folder(out, config)
    rows = _rows(backgrounds, usable, dose_list, seed, orientation, excluded)
    path, written = write_pairs(
        folder, unique_pairs(rows, excluded.counts, "footprints", excluded.duplicate)
    )
    read = len(backgrounds) * len(motifs) * len(dose_list) * strands
    if not written:
        raise DataValidationError(
            f"no footprint pair was made ({read} rows considered; excluded: "
            f"{tally(excluded.counts)})"
        )
    report = {
        "read": read,
        "motifs": len(motifs),
        "backgrounds_read": backgrounds_read,
        "backgrounds": len(backgrounds),
        "written_rows": written,
        "excluded": dict(sorted(excluded.counts.items())),
        "settings": {
            "motifs_file": motifs_file,
            "config": config,
            "copies": list(copies),
            "spacing": list(spacings),
            "orientation": orientation,
            "max_backgrounds": max_backgrounds,
            "seed": seed,
            "script_version": f"perturbation-bench {__version__}",
        },
    }
    write_report(folder, report)
    write_excluded(folder, ("motif", "background", *DOSE_AXES, "reason"), excluded.named)
    return path, report


def _rows(backgrounds, motifs, dose_list, seed: int, orientation: str, excluded):
    """Every footprint row of each background, motif and dose (one per strand scored), with a
    dose whose inserts do not fit the background excluded."""
    from tqdm import tqdm

    from perturbation_bench.pairs.identity import keyed_rng

    strands = 2 if orientation == "both" else 1
    for background in tqdm(backgrounds, desc="footprints", unit="background"):
        for motif in motifs:
            control = control_insert(motif.consensus, keyed_rng(seed, motif.name, background.name))
            for dose in dose_list:
                made = footprint_rows(background, motif, control, dose, seed, orientation)
                if made is None:
                    reason = "insert_longer_than_background"
                    excluded.add(motif.name, background.name, dose, reason, strands)
                yield from made or ()


class _Excluded:
    """What a footprint build leaves out: rows per reason, and each item named with its reason
    (``_excluded.tsv``)."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.named: list[tuple] = []

    def add(self, motif: str, background: str, dose, reason: str, rows: int) -> None:
        self.counts[reason] += rows
        self.named.append((motif, background, *dose, reason))

    def duplicate(self, row: dict) -> None:
        """``unique_pairs``' callback: ``row`` repeats a pair already written (it counts it)."""
        dose = dose_of(row)
        self.named.append((row["motif"], row["background_id"], *dose, "duplicate_pair"))
