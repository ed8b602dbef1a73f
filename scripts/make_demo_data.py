"""Rebuild perturbation_bench/demo_data/: the small synthetic dataset behind ``data_dir: demo``.

    python scripts/make_demo_data.py

SYNTHETIC: a random two-chromosome genome whose genes are made of codons drawn from the human
(or mouse) codon-usage table, built into all three configs by ``perturbation-bench build`` with
8,192 bp windows, 24 pairs each. It shows the tasks running offline; its scores mean nothing
about any model's biology. Deterministic: the same code gives the same bytes.
"""

import shutil
import sys
import tempfile
from pathlib import Path

from perturbation_bench.cli import main
from perturbation_bench.dataset.codons import load_codon_table
from perturbation_bench.dataset.synthetic import synthetic_genome

CONFIGS = [  # (kind, species whose codon usage draws the genome and recodes it, extra arguments)
    ("syn", "human", []),
    ("syn", "mouse", []),
    ("motif", "human", []),
]


def make(out: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for kind, species, extra in CONFIGS:
            fasta, gtf = synthetic_genome(
                Path(scratch) / species, load_codon_table(species), n_genes=16, chrom_length=200_000
            )
            status = main(
                [
                    "build",
                    kind,
                    "--fasta",
                    str(fasta),
                    "--gtf",
                    str(gtf),
                    "--species",
                    species,
                    "--out",
                    str(out),
                    "--max-pairs",
                    "24",
                    "--assembly",
                    f"synthetic-{species}",
                    "--annotation-source",
                    "synthetic",
                    *extra,
                ]
            )
            if status:
                sys.exit(status)


if __name__ == "__main__":
    target = (
        Path(__file__).resolve().parents[1] / "perturbation_bench" / "demo_data"
    )  # the checkout's
    shutil.rmtree(target, ignore_errors=True)
    make(target)
