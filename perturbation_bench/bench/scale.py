"""Scale benchmark: where the time and the memory of a large run go, stage by stage.

    perturbation-bench bench --scale [--sizes 20000x8192,20000x1024] [--processes 1] [--order 3]

For each size (pairs x bp) it writes random pairs (a random window and a copy with one random
12 bp patch) as parquet, and scores them with ``kmer-markov`` (counted on a random 1 Mb genome,
or ``--fasta``) through lm-eval's ``simple_evaluate`` on the ``perturbation_custom`` task, in a
fresh process (``--processes N``: N processes under ``torchrun``, each measured on its own).
Stages, timed in that process by wrapping lm-eval's functions (the benchmark's process only;
``stage_clock.py``):

    start-up   imports, the model (the genome's counts), the task index
    task       lm-eval's task build, without the reading below
    read       the task's custom_dataset: the files read, checked and made documents
    requests   lm-eval's requests built, grouped and sorted, up to the model's first score
    scoring    the model's loglikelihood call
    wait       in lm-eval's collectives after scoring: waiting for the other processes to finish
               theirs (none with one process)
    results    filters, per-pair metrics, the gather to rank 0, aggregation
    env        lm-eval's description of the run's environment (git, pip, torch's collect_env)
    write      with --log-samples: lm-eval's results and samples files

Each size is also run on 20 pairs of the same length, whose costs count as fixed. ``outside``
is the time outside start-up, scoring and waiting beyond the 20-pair run's, as a multiple of scoring
(target <= 0.5). ``growth`` is the peak resident set beyond the 20-pair run's (both from
before the task build), as a multiple of the bytes of the sequences the process scores, both
members of each of its pairs (target <= 2 from 8,192 bp, <= 4 below).

The instrument, the stage clock wrapped around lm-eval in the measured process, is
``stage_clock.py``; this module writes the inputs, launches the runs and prints the two tables.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from perturbation_bench.bench.options import at_least, count
from perturbation_bench.bench.stage_clock import CONFIG, MEMORY_STAGES, STAGES

DEFAULT_SIZES = "20000x8192,20000x1024"
BASELINE_PAIRS = 20
"""The run whose costs count as fixed: the same command on this many pairs."""
GENOME_BP = 1_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``bench --scale`` options."""
    parser.add_argument(
        "--scale",
        action="store_true",
        help="instead: per-stage time and peak memory of large runs (perturbation_bench/bench/scale.py)",
    )
    parser.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        help="with --scale: PAIRSxBP,... (default %(default)s)",
    )
    parser.add_argument(
        "--processes", type=count, default=1, help="with --scale: processes (%(default)s)"
    )
    parser.add_argument(
        "--order", type=at_least(0), default=3, help="with --scale: kmer-markov order (%(default)s)"
    )
    parser.add_argument("--fasta", help="with --scale: genome to count (default: random 1 Mb)")
    parser.add_argument(
        "--log-samples", action="store_true", help="with --scale: also write the samples file"
    )


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """``"20000x8192,20000x1024"`` -> ``[(20000, 8192), (20000, 1024)]``."""
    from perturbation_bench.errors import OptionsError

    sizes = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        pairs, _, length = item.partition("x")
        if not (pairs.isdigit() and length.isdigit() and int(pairs) > 0 and int(length) > 12):
            raise OptionsError(f"--sizes takes PAIRSxBP items (e.g. 20000x8192), got {item!r}")
        sizes.append((int(pairs), int(length)))
    return sizes


def run(args: argparse.Namespace) -> int:
    """Measure every size and its 20-pair baseline, print the tables; 1 if a row misses a target."""
    from perturbation_bench.errors import OptionsError
    from perturbation_bench.fixtures.random_pairs import write_random_genome

    sizes = parse_sizes(args.sizes)
    if args.processes < 1:
        raise OptionsError(f"--processes must be at least 1, got {args.processes}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="pb-scale-") as scratch:
        scratch = Path(scratch)
        fasta = args.fasta or str(write_random_genome(scratch / "genome.fa", GENOME_BP))
        for pairs, length in sizes:
            measured = [
                _measure(scratch, count, length, fasta, args) for count in (BASELINE_PAIRS, pairs)
            ]
            for baseline, stages in zip(*measured, strict=True):
                rows.append(Row(pairs, length, args.processes, stages, baseline))
    print(format_table(rows))
    return 0 if all(row.within_targets() for row in rows) else 1


def _measure(scratch: Path, pairs: int, length: int, fasta: str, args) -> list[dict]:
    """Write ``pairs`` random pairs of ``length`` bp, run :func:`measure` on them; the stages of
    every process, by rank."""
    import pyarrow.parquet as pq

    from perturbation_bench.fixtures.random_pairs import random_pair_table

    data = scratch / f"{pairs}x{length}"
    (data / CONFIG).mkdir(parents=True)
    print(f"writing {pairs:,} random pairs of {length:,} bp ...", flush=True)
    pq.write_table(random_pair_table(pairs, length), data / CONFIG / "test.parquet")
    spec = {
        "data_dir": str(data),
        "fasta": fasta,
        "order": args.order,
        "log_samples": args.log_samples,
        "out": str(data / "stages"),
        "output_path": str(data / "run"),
    }
    print(
        f"scoring them with kmer-markov (order {args.order}), {args.processes} process(es) ...",
        flush=True,
    )
    _launch(spec, args.processes)
    return [
        json.loads((data / f"stages.rank{rank}.json").read_text()) for rank in range(args.processes)
    ]


def _launch(spec: dict, processes: int) -> None:
    command = [sys.executable, "-m", "perturbation_bench.bench.stage_clock", json.dumps(spec)]
    if processes > 1:
        command = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",  # one machine, a free port: no clash with another job's
            "--nproc_per_node",
            str(processes),
            "-m",
            "perturbation_bench.bench.stage_clock",
            json.dumps(spec),
        ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(command, check=True, env=env)


def _variable_seconds(seconds: dict) -> float:
    """The seconds of the stages that are neither start-up, scoring nor waiting."""
    return sum(v for k, v in seconds.items() if k not in ("start-up", "scoring", "wait"))


class Row:
    """One process's measurement of one size, against the same process of the 20-pair run."""

    def __init__(self, pairs: int, length: int, processes: int, stages: dict, baseline: dict):
        self.pairs, self.length, self.processes = pairs, length, processes
        self.rank = stages["rank"]
        self.seconds, self.peaks = stages["seconds"], stages["peaks"]
        self.baseline = baseline
        self.scored_pairs = len(range(self.rank, pairs, processes))
        self.sequence_bytes = 2 * length * self.scored_pairs

    @property
    def outside(self) -> float:
        """Seconds outside start-up and scoring beyond the 20-pair run's, over scoring."""
        rest = _variable_seconds(self.seconds) - _variable_seconds(self.baseline["seconds"])
        return rest / self.seconds["scoring"]

    @property
    def growth(self) -> int:
        """Peak RSS above the 20-pair run's (both counted from before the task build)."""
        return self.peaks["write"] - self.baseline["peaks"]["write"]

    @property
    def growth_ratio(self) -> float:
        return self.growth / self.sequence_bytes

    def memory_target(self) -> float:
        return 2.0 if self.length >= 8192 else 4.0

    def within_targets(self) -> bool:
        return self.outside <= 0.5 and self.growth_ratio <= self.memory_target()


def format_table(rows: list[Row]) -> str:
    """Two markdown tables: seconds per stage with outside/scoring, peak RSS growth and the
    targets; the peak RSS after each stage."""
    timing = _markdown(
        [
            "pairs x bp",
            "process",
            *STAGES,
            "outside / scoring",
            "peak RSS growth",
            "growth / sequence bytes",
            "targets",
        ],
        [
            [
                f"{row.pairs:,} x {row.length:,}",
                f"{row.rank} of {row.processes}",
                *(f"{row.seconds.get(stage, 0.0):.1f}" for stage in STAGES),
                f"{row.outside:.2f}x (<= 0.5)",
                f"{row.growth / 2**20:,.0f} MiB",
                f"{row.growth_ratio:.2f}x (<= {row.memory_target():.0f})",
                "met" if row.within_targets() else "MISSED",
            ]
            for row in rows
        ],
    )
    memory = _markdown(
        ["pairs x bp", "process", *MEMORY_STAGES, "sequence bytes"],
        [
            [
                f"{row.pairs:,} x {row.length:,}",
                f"{row.rank} of {row.processes}",
                *(f"{row.peaks[stage] / 2**20:,.0f}" for stage in MEMORY_STAGES),
                f"{row.sequence_bytes / 2**20:,.0f}",
            ]
            for row in rows
        ],
    )
    return "\n".join(
        [
            "Seconds per stage; outside and growth beyond the same run on 20 pairs:",
            "",
            timing,
            "",
            "Peak RSS growth at the end of each stage (MiB above the peak before the task build):",
            "",
            memory,
        ]
    )


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows])
