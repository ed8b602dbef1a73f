"""The background windows a footprint build inserts motifs into (``build footprints``).

A background is a name and its bases, upper-cased, from one of:

- ``--backgrounds FILE.fa``: every record of a FASTA file, named by the record;
- ``--backgrounds FILE.txt``: one sequence per line (DART-Eval's ``raw_seqs_350.txt``), named
  by its 0-based line number as DART-Eval keys them; a blank line before the last sequence is
  refused, naming it;
- ``--backgrounds DIR/<config>``: a config built by ``build controls``, each row's shuffled
  window (its ``sequence``: DART-Eval's task-1 negatives), named by its ``benchmark_id``;
- ``--bed FILE --fasta FILE``: the bases of every BED region, named ``chrom:start-end``.

Every background is kept, in input order; what cannot hold an insert is excluded later, and counted,
by the build (``kinds/footprints/builder.py``). A background must hold A, C, G, T or N alone (the
letters every pair file holds, ``pairs/files.py``): another letter is refused, naming the source,
the background and the letter's position.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from perturbation_bench.dna import first_foreign_letter
from perturbation_bench.errors import DataValidationError, OptionsError


class Background(NamedTuple):
    """One background window: its name and its bases (upper case)."""

    name: str
    sequence: str


def read_backgrounds(source: str | None, bed: str | None, fasta: str | None) -> list[Background]:
    """The backgrounds of ``--backgrounds`` or of ``--bed`` with ``--fasta`` (module docstring).

    Raises:
        OptionsError: neither or both sources, or ``--bed`` without ``--fasta``.
        DataValidationError: a controls folder without pairs or shuffles, a BED region on a
            chromosome the FASTA lacks or past its end (file, line), a blank line among a text
            file's sequences, a letter other than A, C, G, T or N, no background at all.
    """
    from perturbation_bench.formats.fasta import Genome

    _check_sources(source, bed, fasta)
    backgrounds = (
        _bed_backgrounds(bed, Genome(fasta)) if bed is not None else _file_backgrounds(source)
    )
    if not backgrounds:
        raise DataValidationError(f"{source or bed}: no background sequence")
    for background in backgrounds:
        foreign = first_foreign_letter(background.sequence)
        if foreign != "none":
            raise DataValidationError(
                f"{fasta or source}: background {background.name!r} holds {foreign}; a "
                "background holds A, C, G, T or N alone"
            )
    return backgrounds


def _check_sources(source: str | None, bed: str | None, fasta: str | None) -> None:
    """Refuse neither or both of ``--backgrounds`` and ``--bed``, and ``--bed`` without
    ``--fasta``."""
    if (source is None) == (bed is None):
        given = "both were given" if source is not None else "neither was given"
        raise OptionsError(
            "build footprints takes its backgrounds from one of --backgrounds "
            f"FASTA|TXT|CONFIG_DIR or --bed with --fasta ({given})"
        )
    if bed is not None and fasta is None:
        raise OptionsError("--bed needs --fasta, the genome its regions are read from")


def _file_backgrounds(source: str) -> list[Background]:
    """The backgrounds of ``--backgrounds``: a controls folder's, a text file's lines or a
    FASTA's records."""
    from perturbation_bench.formats.fasta import Genome

    if Path(source).is_dir():
        return _control_backgrounds(Path(source))
    if Path(source).suffix == ".txt":
        return _line_backgrounds(Path(source))
    genome = Genome(source)
    return [Background(name, genome.fetch(name, 0, genome.length(name))) for name in genome.names]


def _line_backgrounds(path: Path) -> list[Background]:
    if not path.is_file():
        raise DataValidationError(f"{path}: no such file of background sequences")
    lines = path.read_text().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise DataValidationError(f"{path} line {number}: blank, not a background sequence")
    return [Background(str(row), line.strip().upper()) for row, line in enumerate(lines)]


def _bed_backgrounds(bed: str, genome) -> list[Background]:
    from perturbation_bench.formats.bed import read_bed
    from perturbation_bench.formats.fasta import resolve_chromosome

    backgrounds = []
    for number, (name, start, end, _) in read_bed(bed, numbered=True):
        chrom = resolve_chromosome(name, genome.names)
        if chrom is None or end > genome.length(chrom):
            where = "is not in" if chrom is None else f"ends past the end of {chrom} in"
            raise DataValidationError(
                f"{bed} line {number}: {name}:{start}-{end} {where} {genome.path}"
            )
        backgrounds.append(Background(f"{name}:{start}-{end}", genome.fetch(chrom, start, end)))
    return backgrounds


def _control_backgrounds(folder: Path) -> list[Background]:
    from perturbation_bench.pairs.fields import PERTURBED
    from perturbation_bench.pairs.files import read_pair_file
    from perturbation_bench.pairs.layout import PARQUET_GLOB

    files = sorted(folder.glob(PARQUET_GLOB))
    if not files:
        raise DataValidationError(
            f"{folder}: no parquet files (a config built by 'build controls')"
        )
    backgrounds = []
    for path in files:
        table = read_pair_file(path, columns=["benchmark_id", "shuffle"])
        if "shuffle" not in table.column_names or "benchmark_id" not in table.column_names:
            raise DataValidationError(
                f"{path}: not a config built by 'build controls' (no shuffle and benchmark_id "
                "columns); give its shuffled windows as a FASTA instead"
            )
        names, sequences = table.column("benchmark_id").to_pylist(), table.column(PERTURBED)
        backgrounds += [
            Background(str(name), sequence.upper())
            for name, sequence in zip(names, sequences.to_pylist(), strict=True)
        ]
    return backgrounds
