"""The backgrounds of ``build footprints`` (``formats/backgrounds.py``): which sources it takes,
refused before any file is read. The files it reads are held by
``tests/kinds/footprints/test_footprints.py``."""

from __future__ import annotations

import pytest

from perturbation_bench.errors import OptionsError
from perturbation_bench.formats.backgrounds import read_backgrounds


@pytest.mark.parametrize(
    ("source", "bed", "fasta", "message"),
    [
        (None, None, None, r"--bed with --fasta \(neither was given\)"),
        ("a.fa", "a.bed", "g.fa", r"--bed with --fasta \(both were given\)"),
        (None, "missing.bed", None, "--bed needs --fasta, the genome its regions are read from"),
    ],
)
def test_sources_are_refused_before_any_file_is_read(source, bed, fasta, message):
    with pytest.raises(OptionsError, match=message):
        read_backgrounds(source, bed, fasta)
