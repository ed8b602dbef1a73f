"""The composition floors of paired controls: kmer-markov's accuracy and tie rate at several
orders on controls built from a genome and its annotation. Prints a Markdown table.

    python scripts/control_floors.py --fasta GENOME.fa --gff3 ANNOTATION.gff3 \
        [--count-fasta OTHER.fa] [--orders 0,1,2,5,8] [--shuffles kmer:2,kmer:3,...]
        [--features cds,promoter]

Controls: ``build controls`` of CDS exons, introns and promoters (``--features``; 350 bp windows,
the ``--shuffles``, default dinucleotide and mononucleotide) and, with the default shuffles,
``build syn --recode shuffle`` (the codon control, 2,048 bp windows). Each pair is scored by the chain ``kmer-markov`` uses (``models/markov_chain.py``),
counted on ``--count-fasta`` (default: the same FASTA, whose real elements a high-order chain has
then seen: count on other chromosomes for a held-out floor): accuracy = share of pairs with
LL(original) > LL(perturbed), ties = share with equal LLs (exact: the chain's sum is exactly
rounded).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pandas as pd

from perturbation_bench.cli import main as cli
from perturbation_bench.models.markov_chain import MarkovChain

SHUFFLES, FEATURES = "dinucleotide,mononucleotide", "cds,intron,promoter"


def build(fasta: str, gff3: str, out: Path, shuffles: str, features: str) -> dict[str, Path]:
    """Build every control into ``out``; ``{label: config folder}``."""
    folders = {}
    for feature in features.split(","):
        for shuffle in shuffles.split(","):
            folders[f"{feature}, {shuffle}"] = build_control(fasta, gff3, out, feature, shuffle)
    if shuffles == SHUFFLES:
        folders["CDS, codon shuffle"] = build_codon_control(fasta, gff3, out)
    return folders


def build_control(fasta: str, gff3: str, out: Path, feature: str, shuffle: str) -> Path:
    """``build controls`` of one feature and shuffle (350 bp windows); its config folder."""
    config = f"{feature}_{shuffle.replace(':', '')}"
    cli(
        ["build", "controls", "--fasta", fasta, "--gff3", gff3, "--feature", feature]
        + ["--shuffle", shuffle, "--window", "350", "--config", config, "--out", str(out)]
    )
    return out / config


def build_codon_control(fasta: str, gff3: str, out: Path) -> Path:
    """``build syn --recode shuffle`` (2,048 bp windows); its config folder."""
    cli(
        ["build", "syn", "--recode", "shuffle", "--fasta", fasta, "--gff3", gff3]
        + ["--species", "yeast", "--window", "2048", "--flank", "512", "--config", "codon"]
        + ["--out", str(out)]
    )
    return out / "codon"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fasta", required=True)
    parser.add_argument("--gff3", required=True)
    parser.add_argument("--count-fasta", help="the FASTA the chains count (default: --fasta)")
    parser.add_argument("--orders", default="0,1,2,5,8")
    parser.add_argument("--shuffles", default=SHUFFLES, help=f"default {SHUFFLES}")
    parser.add_argument("--features", default=FEATURES, help=f"default {FEATURES}")
    args = parser.parse_args()
    orders = [int(k) for k in args.orders.split(",")]
    chains = {k: MarkovChain.count_genome(args.count_fasta or args.fasta, k) for k in orders}
    with tempfile.TemporaryDirectory() as out:
        folders = build(args.fasta, args.gff3, Path(out), args.shuffles, args.features)
        print("| control | pairs | " + " | ".join(f"order {k}" for k in orders) + " |")
        print("|---|---|" + "---|" * len(orders))
        for label, folder in folders.items():
            pairs = pd.read_parquet(folder, columns=["original_sequence", "sequence"])
            cells = []
            for k in orders:
                margins = [
                    chains[k].log_likelihood("", o) - chains[k].log_likelihood("", p)
                    for o, p in zip(pairs["original_sequence"], pairs["sequence"], strict=True)
                ]
                wins = sum(m > 0 for m in margins) / len(margins)
                ties = sum(m == 0 for m in margins) / len(margins)
                cells.append(f"{100 * wins:.1f}" + (f" ({100 * ties:.1f}% tied)" if ties else ""))
            print(f"| {label} | {len(pairs)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
