"""BED regions (``formats/bed.py``): 0-based half-open regions as written, their names, the lines
skipped, and each refusal naming the file and the line."""

from __future__ import annotations

import pytest

from perturbation_bench.errors import DataValidationError
from perturbation_bench.formats.bed import read_bed

TEXT = (
    "track name=x\n"
    "browser position c1:1-10\n"
    "# a comment\n"
    "c1\t0\t10\tfirst\n"
    "\n"
    "c2\t5\t6\n"
    "c1\t20\t30\t\textra\n"
)


def test_regions_keep_their_coordinates_and_take_a_1_based_name_when_unnamed(tmp_path):
    path = tmp_path / "r.bed"
    path.write_text(TEXT)
    assert read_bed(path) == [
        ("c1", 0, 10, "first"),
        ("c2", 5, 6, "c2:6-6"),
        ("c1", 20, 30, "c1:21-30"),
    ]
    assert [number for number, _ in read_bed(path, numbered=True)] == [4, 6, 7]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("c1 0 10", "line 2: expected CHROM<tab>START<tab>END, got 'c1 0 10'"),
        ("c1\t0", "line 2: expected CHROM<tab>START<tab>END"),
        ("c1\tx\t10", "line 2: expected CHROM<tab>START<tab>END"),
        ("c1\t10\t10", "line 2: need 0 <= START < END"),
        ("c1\t-1\t10", "line 2: need 0 <= START < END"),
    ],
)
def test_a_line_that_is_not_a_region_is_refused_naming_the_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.bed"
    path.write_text(f"c1\t0\t5\n{line}\n")
    with pytest.raises(DataValidationError) as caught:
        read_bed(path)
    assert str(caught.value).startswith(f"{path}: {message}")
