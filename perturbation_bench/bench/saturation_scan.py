"""``perturbation-bench bench --saturation``: what scoring each distinct input once buys on a
saturation scan (built with ``variants/saturation.py``).

A random genome, a saturation scan of its middle ``--saturation-bp`` bases (default 200: 600
variants), 1,024 bp windows, read as 6-mers after ``<dna>`` (171 tokens) by random models of
width 512 and 4 layers, a shape where the linear layers dominate as in 1-8B models. Each model
scores the scan with ``dedupe=false`` and ``dedupe=true``, each ``--saturation-repeats`` times
(3) in a fresh process, the fastest kept (:func:`fastest`); the table gives
pairs/s, the speed-up of the whole evaluation and of the model's scoring alone (the time in its
``loglikelihood``: lm-eval's task set-up and metrics, the same in both runs, left out), the
ideal one, and the largest LL difference.

Ideal speed-ups, for a change at the fraction ``p`` of the window (``p = 0.5`` here):
``dna-mlm`` runs one masked pass per position instead of one per variant, 3x; ``dna-hf`` runs
each position's reference and its three alternates as one group, ``p + 4 (1 - p)`` windows of
work instead of ``3 (p + 2 (1 - p))`` with pair-wise prefix sharing, 1.8x.

``--saturation-score marginal_llr`` (or ``entropy``, ``pairs/four_allele.py``) scores the scan by
the four-allele marginal: each variant asks for its site's four windows, which the three
alternates of a site share. ``dna-mlm`` then runs one masked pass per position instead of two
per variant, 6x; ``dna-hf`` runs the four windows of a position once, ``p + 4 (1 - p)``, instead
of once per variant, 3x.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from dataclasses import replace
from pathlib import Path

from perturbation_bench.bench.measuring import (
    Measurement,
    compare_lls,
    in_fresh_process,
    measure,
)
from perturbation_bench.bench.options import count
from perturbation_bench.dna import BASES
from perturbation_bench.pairs.scores import SCORE

WINDOW, HIDDEN, LAYERS, AT = 1024, 512, 4, 0.5
TASK, CONFIG = "perturbation_variants", "saturation"


def ideal_speedup(method: str, p: float = AT, score: str = "llr") -> float:
    """The ideal ratios of the module docstring."""
    if SCORE[score].reading.comparisons > 1:
        return 6.0 if method == "dna-mlm" else 3.0
    return 3.0 if method == "dna-mlm" else 3 * (p + 2 * (1 - p)) / (p + 4 * (1 - p))


def prepare(folder: Path, bases: int) -> tuple[dict, Path]:
    """Random models (causal and masked) and the scan's pairs; the models by method and the data."""
    from perturbation_bench.fixtures.random_models import (
        as_masked_lm_tokenizer,
        kmer_tokenizer,
        save_random_bert,
        save_random_llama,
    )
    from perturbation_bench.formats.fasta import Genome
    from perturbation_bench.variants.build import build_variant_dataset
    from perturbation_bench.variants.saturation import (
        parse_region,
        saturation_rows,
        write_saturation,
    )

    rng = random.Random(0)
    length = 2 * WINDOW + bases
    fasta = folder / "genome.fa"
    fasta.parent.mkdir(parents=True, exist_ok=True)
    fasta.write_text(">chr1\n" + "".join(rng.choice(BASES) for _ in range(length)) + "\n")
    genome = Genome(str(fasta))
    region = parse_region(f"chr1:{WINDOW + 1}-{WINDOW + bases}")
    rows, summary = saturation_rows(genome, [region])
    write_saturation(rows, summary, folder / "scan.parquet")
    build_variant_dataset(str(folder / "scan.parquet"), genome, CONFIG, folder / "data", WINDOW)
    size = {"layers": LAYERS, "hidden": HIDDEN, "max_positions": WINDOW // 6 + 4}
    models = {
        "dna-hf": save_random_llama(folder / "causal", kmer_tokenizer(6), **size),
        "dna-mlm": save_random_bert(
            folder / "masked", as_masked_lm_tokenizer(kmer_tokenizer(6)), **size
        ),
    }
    return models, folder / "data"


def add_arguments(parser) -> None:
    """The ``bench --saturation`` options."""
    parser.add_argument(
        "--saturation",
        action="store_true",
        help="instead: a saturation scan with dedupe off and on (perturbation_bench/bench/saturation_scan.py)",
    )
    parser.add_argument(
        "--saturation-bp",
        type=count,
        default=200,
        help="with --saturation: bases scanned (%(default)s)",
    )
    parser.add_argument(
        "--saturation-repeats",
        type=count,
        default=3,
        help="with --saturation: runs of each model and dedupe setting, the fastest kept (%(default)s)",
    )
    parser.add_argument(
        "--saturation-score",
        choices=SCORE,
        default="llr",
        help="with --saturation: the variant score (%(default)s; marginal_llr or entropy: four alleles)",
    )


def run(args: argparse.Namespace) -> int:
    """Measure both models with and without dedupe; print the table; 1 if values disagree."""
    rows, agree = [], True
    with tempfile.TemporaryDirectory(prefix="pb-saturation-") as scratch:
        models, data = prepare(Path(scratch), args.saturation_bp)
        metadata = {"data_dir": str(data), "config": CONFIG, "preset": "carbon"}
        metadata["score"] = args.saturation_score
        pairs = 3 * args.saturation_bp
        for method in ("dna-mlm", "dna-hf"):
            runs = []
            for dedupe in (False, True):
                print(f"measuring {method} dedupe={dedupe} ...", flush=True)
                repeats = [
                    in_fresh_process(
                        measure,
                        method,
                        str(models[method]),
                        metadata,
                        pairs,
                        "cpu",
                        "float32",
                        "8",
                        {"dedupe": dedupe},
                        TASK,
                    )
                    for _ in range(max(1, args.saturation_repeats))
                ]
                runs.append(fastest(repeats))
            diff, same = compare_lls(*runs)
            agree = agree and same
            rows.append((method, *runs, diff, ideal_speedup(method, score=args.saturation_score)))
    print(f"score: {args.saturation_score}")
    print(format_table(rows))
    if not agree:
        print("MISMATCH: scores with and without dedupe differ by more than 1e-6 |LL| + 1e-3 nats")
    return 0 if agree else 1


def fastest(repeats: list[Measurement]) -> Measurement:
    """The first run's scores with the fewest seconds of any run, whole and in the model (the
    least disturbed by other work on the machine, as ``timeit`` keeps the minimum)."""
    return replace(
        repeats[0],
        seconds=min(run.seconds for run in repeats),
        model_seconds=min(run.model_seconds for run in repeats),
    )


def format_table(rows) -> str:
    """One row per model: pairs/s of each run, the speed-up of the whole evaluation and of the
    model's scoring alone (its ``loglikelihood``: the passes and the inputs they take), each
    against the ideal."""
    lines = [
        "| model | pairs | dedupe=false pairs/s | dedupe=true pairs/s | speed-up | scoring speed-up "
        "| ideal | of ideal (whole, scoring) | max abs dLL |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for method, plain, deduped, diff, ideal in rows:
        whole = plain.seconds / deduped.seconds
        scoring = plain.model_seconds / deduped.model_seconds
        lines.append(
            f"| {method} | {len(plain.lls)} | {len(plain.lls) / plain.seconds:.2f} | "
            f"{len(deduped.lls) / deduped.seconds:.2f} | {whole:.2f}x | {scoring:.2f}x | "
            f"{ideal:.2f}x | {whole / ideal:.0%}, {scoring / ideal:.0%} | {diff:.1e} |"
        )
    return "\n".join(lines)
