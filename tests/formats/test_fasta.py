"""FASTA genomes (``formats/fasta.py``): windows against slices of the file read here, either
strand, and a chromosome's name across the ``chr`` and mitochondrial conventions."""

from __future__ import annotations

import gzip
import random

import pytest

from dna_fixtures import reverse_complement
from perturbation_bench.errors import DataSourceError
from perturbation_bench.formats.fasta import Genome, resolve_chromosome


@pytest.mark.parametrize(
    ("names", "asked", "found"),
    [
        (["chr1", "chrM"], "1", "chr1"),
        (["chr1", "chrM"], "chr1", "chr1"),
        (["chr1", "chrM"], "MT", "chrM"),
        (["chr1", "chrM"], "M", "chrM"),
        (["1", "MT"], "chr1", "1"),
        (["1", "MT"], "chrM", "MT"),
        (["1", "MT"], "CHR1", "1"),
        (["1", "chr1"], "chr1", "chr1"),  # the name as written first
        (["1", "chr1"], "1", "1"),
        (["MT", "chrMT"], "chrMT", "chrMT"),
        (["M"], "MT", "M"),
        (["chrMT"], "M", "chrMT"),
        (["chr1", "chrM"], "2", None),
        (["chr10"], "chr1", None),
    ],
)
def test_a_chromosome_is_found_under_either_naming_convention(names, asked, found):
    assert resolve_chromosome(asked, names) == found


def test_windows_are_the_files_bases_upper_cased_and_reverse_complemented_on_minus(tmp_path):
    rng = random.Random(3)
    sequences = {
        name: "".join(rng.choice("ACGTNacgtn") for _ in range(length))
        for name, length in (("c2", 301), ("c1", 77))
    }
    lines = []
    for name, sequence in sequences.items():
        lines.append(f">{name} description")
        lines += [sequence[i : i + 60] for i in range(0, len(sequence), 60)]
    (tmp_path / "g.fa").write_text("\n".join(lines) + "\n")
    genome = Genome(tmp_path / "g.fa")
    assert genome.names == ["c2", "c1"]
    assert [genome.length(name) for name in genome.names] == [301, 77]
    assert "c1" in genome and "c3" not in genome
    for name, sequence in sequences.items():
        for start, end in ((0, 10), (55, 125), (len(sequence) - 9, len(sequence))):
            expected = sequence[start:end].upper()
            assert genome.fetch(name, start, end) == expected
            assert genome.fetch(name, start, end, "-") == reverse_complement(expected)


def test_a_file_that_is_not_a_fasta_is_refused_naming_it(tmp_path):
    with pytest.raises(DataSourceError, match=f"cannot open FASTA {tmp_path / 'none.fa'}"):
        Genome(tmp_path / "none.fa")


def test_a_gzip_that_is_not_bgzip_is_refused_naming_the_file_and_the_fix(tmp_path):
    path = tmp_path / "g.fa.gz"
    path.write_bytes(gzip.compress(b">c\nACGT\n"))
    with pytest.raises(DataSourceError, match=f"cannot open FASTA {path}: .*bgzip"):
        Genome(path)


def test_a_streamed_fasta_gives_each_record_whole_in_pieces_plain_or_gzipped(tmp_path):
    from perturbation_bench.formats.fasta import stream_fasta

    text = ">a one\nACGT\nacgtN\n>b\n\n>c\nTTTT\nGG\n"
    plain = tmp_path / "g.fa"
    plain.write_text(text)
    zipped = tmp_path / "g.fa.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    for path in (plain, zipped):
        pieces = list(stream_fasta(path, chunk=4))
        assert [(record, bases) for record, bases, _ in pieces] == [
            (0, b"ACGT"), (0, b"acgtN"), (2, b"TTTT"), (2, b"GG")
        ]  # fmt: skip
        assert pieces[-1][2] == path.stat().st_size  # bytes read, for a progress bar


def test_bases_before_the_first_header_are_refused_naming_the_line(tmp_path):
    from perturbation_bench.formats.fasta import stream_fasta

    path = tmp_path / "g.fa"
    path.write_text("\nACGT\n>a\nACGT\n")
    with pytest.raises(DataSourceError, match=r"g.fa: line 2: bases before the first > header"):
        list(stream_fasta(path))


def test_a_gzipped_fasta_cut_short_is_refused_naming_it(tmp_path):
    from perturbation_bench.formats.fasta import stream_fasta

    path = tmp_path / "g.fa.gz"
    path.write_bytes(gzip.compress(b">a\n" + b"ACGT" * 5000 + b"\n")[:60])
    with pytest.raises(DataSourceError, match=r"cannot read FASTA .*g.fa.gz: "):
        list(stream_fasta(path))
