"""``perturbation-bench annotate``: columns added to a data dir's pair files.

annotate novelty --fasta GENOME --data DIR [--k 21]
    each pair's number of canonical k-mers of each window absent from the genome
    (``dataset/novelty.py``), as two columns of its file
"""

from __future__ import annotations

import argparse

DEFAULT_K = 21


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``annotate`` subcommand's annotations, one subcommand each."""
    kinds = parser.add_subparsers(dest="annotation", required=True, metavar="ANNOTATION")
    novelty = kinds.add_parser(
        "novelty", help="count each window's k-mers absent from a genome (two columns per file)"
    )
    novelty.add_argument("--fasta", required=True, help="the genome (FASTA, plain or gzipped)")
    novelty.add_argument("--data", required=True, help="a data dir: its *.parquet pair files")
    novelty.add_argument(
        "--k", type=int, default=DEFAULT_K, help="k-mer size, 1 to 31 (default %(default)s)"
    )


def run(args: argparse.Namespace) -> int:
    """Annotate, with a progress bar over the genome, and print what was written."""
    import os

    from tqdm import tqdm

    from perturbation_bench.dataset.novelty import (
        GenomeLookup,
        annotate_file,
        pair_files_to_annotate,
        query_of,
    )
    from perturbation_bench.pairs.fields import novelty_columns

    files = pair_files_to_annotate(args.fasta, args.data, args.k)
    lookup = GenomeLookup(query_of(files, args.k), args.k)
    size = os.path.getsize(args.fasta)
    with tqdm(total=size, unit="B", unit_scale=True, desc=f"genome {args.k}-mers") as bar:
        bases = lookup.scan(args.fasta, lambda done: bar.update(done - bar.n))
    print(
        f"{len(lookup.query):,} distinct canonical {args.k}-mers in the windows; "
        f"{int(lookup.found.sum()):,} of them in the genome ({bases:,} bases read)"
    )
    for path in files:
        rows = annotate_file(path, lookup)
        print(f"{path}: {rows:,} pairs, columns {' and '.join(novelty_columns(args.k))} written")
    return 0
