"""MEME motif files (``formats/meme.py``): each motif's consensus against one taken base by base
here, and every refusal naming the file, the motif and the reason."""

from __future__ import annotations

import pytest

from dna_fixtures import consensus_of
from perturbation_bench.errors import DataValidationError
from perturbation_bench.formats.meme import read_motifs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "MOTIF A\nletter-probability matrix: w= 2\n0.5 0.5 0 0\n0.6 0.6 0 0\n",
            "motif 'A' position 2: [0.6, 0.6, 0.0, 0.0] is not four probabilities",
        ),
        (
            "MOTIF A\nletter-probability matrix: w= 1\n1 0 0 0\n"
            "MOTIF A\nletter-probability matrix: w= 1\n1 0 0 0\n",
            "motif 'A' appears twice",
        ),
        (
            "MOTIF A\nletter-probability matrix: w= 1\n1 0 0 0\n"
            "MOTIF B\nletter-probability matrix: w= 3\n1 0 0 0\n",
            "motif 'B' has fewer rows than its w= in its letter-probability matrix",
        ),
        (  # the reader would give A the matrix of B
            "MOTIF A\nMOTIF B\nletter-probability matrix: w= 1\n1 0 0 0\n",
            "motif 'A' has no letter-probability matrix",
        ),
        (
            "MOTIF A\nletter-probability matrix: w= 1\n1 0 0 0\nMOTIF B\n\nMOTIF C\n",
            "motif 'B' has no letter-probability matrix; 1 more like it",
        ),
        ("MOTIF A\nletter-probability matrix: alength= 4\n1 0 0 0\n", "without w="),
        ("MOTIF A\nletter-probability matrix: w= 1\n1 0 x 0\n", "not a MEME motif file"),
        (
            "MOTIF A\nletter-probability matrix: alength= 4 w= 2\n1 0 0 0\n0.5 0.5 0\n",
            "motif 'A' position 2 (line 4): 3 numbers where alength= 4 asks for 4",
        ),
        (
            "MOTIF A\nletter-probability matrix: alength= 20 w= 1\n" + "0.05 " * 20 + "\n",
            "motif 'A' (line 2): alength= 20; a DNA motif has 4 letters",
        ),
        ("nothing here\n", "no motif"),
        ("MOTIF\nletter-probability matrix: w= 1\n1 0 0 0\n", "a MOTIF line without a name"),
    ],
)
def test_a_bad_meme_file_is_refused_naming_the_file_the_motif_and_the_reason(
    tmp_path, text, message
):
    path = tmp_path / "bad.meme"
    path.write_text(text)
    with pytest.raises(DataValidationError, match=str(path)) as caught:
        read_motifs(path)
    assert message in str(caught.value)


def test_a_jaspar_meme_file_with_urls_and_tabs_gives_each_motif_its_consensus(tmp_path):
    """JASPAR's MEME export: an alternate name after the identifier, tab-separated rows, a URL
    line after each matrix and no blank line before the next MOTIF."""
    rows = {
        "MA0004.1": [[0.2, 0.8, 0, 0], [0.95, 0, 0.05, 0], [0, 1, 0, 0], [0, 0, 1, 0]],
        "MA0006.1": [[0.125, 0.333333, 0.083333, 0.458333], [0, 0, 0.958333, 0.041667]],
    }
    text = "MEME version 4\n\nALPHABET= ACGT\n\nstrands: + -\n\n"
    for name, matrix in rows.items():
        text += f"MOTIF {name} Arnt\nletter-probability matrix: alength= 4 w= {len(matrix)} "
        text += "nsites= 20 E= 0\n"
        text += "".join("\t".join(f"  {p:.6f}" for p in row) + "\t\n" for row in matrix)
        text += f"URL http://jaspar.genereg.net/matrix/{name}\n"
    (tmp_path / "jaspar.meme").write_text(text)
    motifs = read_motifs(tmp_path / "jaspar.meme")
    assert [(m.name, m.consensus) for m in motifs] == [
        (name, consensus_of(matrix)) for name, matrix in rows.items()
    ]
    assert [m.consensus for m in motifs] == ["CACG", "TG"]
