"""Transcription-factor motifs read from a MEME file, each as its consensus (``build footprints``).

The file is read by memelite's ``read_meme`` (the MEME reader of the tangermeme tools, whose
parse DART-Eval's footprinting generator also follows). A motif's name is the first word of its
``MOTIF`` line (its identifier: ``MOTIF AHR.H12CORE.0.P.B AHR`` is ``AHR.H12CORE.0.P.B``). Its
consensus is, at each position, the base of highest probability, the first of A, C, G, T on a
tie (numpy's argmax over the letter-probability matrix, DART-Eval's ``pwm_to_consensus``)::

    consensus[i] = "ACGT"[argmax_b P[i, b]]

Every row of a matrix must hold four probabilities that are not negative and sum to 1 within
:data:`ROW_SUM_TOLERANCE`. Refused, naming the file, the motif and the position: a file without
motifs, an ``alength=`` other than 4, a row of another count of numbers than its ``alength=``
(with its line; checked before the reader, which would stop on numpy's broadcast error), a row
that breaks the sum, two motifs of one name, a ``MOTIF`` line with no
``letter-probability matrix`` line before the next ``MOTIF`` line (the reader would give it the
next motif's matrix), and a matrix of fewer rows than its ``w=`` (the reader would leave its
motif out).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from perturbation_bench.dna import BASES
from perturbation_bench.errors import DataValidationError

ROW_SUM_TOLERANCE = 0.01
"""How far a matrix row's sum may be from 1 (MEME files round probabilities to a few digits)."""


@dataclass(frozen=True)
class Motif:
    """One motif: its name (the ``MOTIF`` line's first word) and its consensus."""

    name: str
    consensus: str


def read_motifs(path: str | Path) -> list[Motif]:
    """The motifs of a MEME file in file order (module docstring).

    Raises:
        DataValidationError: the file is missing or unreadable as MEME, holds no motif, a row
            of a matrix is not a probability row, or a name repeats.
    """
    path = Path(path)
    if not path.is_file():
        raise DataValidationError(f"{path}: no such MEME file")
    _check_row_widths(path)
    matrices = _read_matrices(path)
    _check_declared(path, matrices)
    if not matrices:
        raise DataValidationError(
            f"{path}: no motif (no 'MOTIF' line with a letter-probability matrix)"
        )
    return [_motif(path, title, matrix) for title, matrix in matrices.items()]


def _read_matrices(path: Path) -> dict:
    """memelite's ``title -> matrix`` of the file; its failures as one line naming the file."""
    from memelite.io import read_meme

    try:
        return read_meme(str(path))
    except AttributeError:
        raise DataValidationError(
            f"{path}: not a MEME motif file (a letter-probability matrix line without w=, "
            "the motif's width)"
        ) from None
    except (ValueError, IndexError, UnicodeDecodeError) as err:
        raise DataValidationError(f"{path}: not a MEME motif file ({err})") from None


def _check_declared(path: Path, matrices: dict) -> None:
    """Refuse a name that repeats, and a MOTIF line whose matrix is missing or was not read
    whole (the reader drops a matrix with fewer rows than its ``w=``)."""
    declared = _declared_motifs(path)
    read = {title.split()[0] for title in matrices if title.split()}
    for names, what in (
        ([name for name, has_matrix in declared.items() if not has_matrix], "no"),
        ([name for name in declared if name not in read], "fewer rows than its w= in its"),
    ):
        if names:
            more = f"; {len(names) - 1} more like it" if len(names) > 1 else ""
            raise DataValidationError(
                f"{path}: motif {names[0]!r} has {what} letter-probability matrix{more}"
            )


def _declared_motifs(path: Path) -> dict[str, bool]:
    """``name -> whether a matrix line follows its MOTIF line``, in the file's order; a name
    that repeats is refused."""
    declared, name = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("MOTIF") and len(line.split()) > 1:
            name = line.split()[1]
            if name in declared:
                raise DataValidationError(f"{path}: motif {name!r} appears twice")
            declared[name] = False
        elif line.startswith("letter") and name is not None:
            declared[name] = True
    return declared


def _motif(path: Path, title: str, matrix) -> Motif:
    """One matrix as a :class:`Motif`, each row checked to be four probabilities."""
    import numpy as np

    name = title.split()[0] if title.split() else ""
    if not name:
        raise DataValidationError(f"{path}: a MOTIF line without a name")
    rows = np.asarray(matrix, dtype=float).T  # positions x A, C, G, T
    for position, row in enumerate(rows, start=1):
        if (row < 0).any() or abs(row.sum() - 1) > ROW_SUM_TOLERANCE:
            raise DataValidationError(
                f"{path}: motif {name!r} position {position}: {row.tolist()} is not four "
                f"probabilities summing to 1 (within {ROW_SUM_TOLERANCE})"
            )
    return Motif(name, "".join(BASES[i] for i in rows.argmax(axis=1)))


def _check_row_widths(path: Path) -> None:
    """Refuse an ``alength=`` other than 4, or a matrix row whose count of numbers is not its
    ``alength=``, naming the motif, the position and the line (module docstring). A row is a
    line of numbers only; the first other line ends the matrix (its row count is checked
    after the reader)."""
    name, rows_left, alength, position = None, 0, 4, 0
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        words = line.split()
        if line.startswith("MOTIF") and len(words) > 1:
            name, rows_left = words[1], 0
        elif line.startswith("letter-probability"):
            rows_left, alength = _matrix_header(line, f"{path}: motif {name!r} (line {number})")
            position = 0
        elif rows_left and words:
            if not all(_is_number(word) for word in words):
                rows_left = 0
                continue
            position, rows_left = position + 1, rows_left - 1
            if len(words) != alength:
                raise DataValidationError(
                    f"{path}: motif {name!r} position {position} (line {number}): "
                    f"{len(words)} numbers where alength= {alength} asks for {alength}, one per "
                    "letter A, C, G, T"
                )


def _matrix_header(line: str, where: str) -> tuple[int, int]:
    """``(rows, alength)`` of a ``letter-probability matrix:`` line: its ``w=`` (0 where it has
    none) and its ``alength=`` (4 where it has none); an ``alength=`` other than 4 is refused,
    the message starting with ``where``."""
    import re

    width, letters = re.search(r"w=\s*(\d+)", line), re.search(r"alength=\s*(\d+)", line)
    alength = int(letters[1]) if letters else 4
    if alength != 4:
        raise DataValidationError(
            f"{where}: alength= {alength}; a DNA motif has 4 letters, A, C, G, T"
        )
    return int(width[1]) if width else 0, alength


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True
