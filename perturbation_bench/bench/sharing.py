"""``perturbation-bench bench --sharing``: what computing a pair's shared pieces once buys.

Every row scores the same pairs with the same random model through ``dna-hf``, sharing off
(``share_prefix=false``) and the default (``share_prefix=auto``: shared or plain, whichever
its first shared batch measured faster), each in a fresh process, three times, alternating
plain and default and which goes first (A B B A A B: :func:`run_order`), the best of the three
kept for each. It reports pairs/s, the default's
speed-up, the way ``auto`` chose with both times it measured, the decoder passes of each (with
those of batch 1), the ideal speed-up and the plan's, the largest LL difference, and the peak
memory each run added while scoring. Scenarios:

- ``6-mer p=...``: a random Llama of width 512 (4 layers) on 8,196 bp pairs read as 6-mers
  after ``<dna>`` (1,367 tokens; a shape where the linear layers dominate, as in 1-8B models),
  a 6 bp change starting at the fraction p = 0.1, 0.5, 0.9 of the window;
- ``6-mer random p``: the same with a 12 bp change at a random place in each pair (the shape of
  real data: every pair shares a prefix of its own length);
- ``1-nt p=0.5``: the default benchmark's single-nucleotide Llama (width 256, 4 layers) on
  8,192 bp pairs, change in the middle;
- ``1-nt windows``: the same model with ``max_length`` 2,048 (sliding windows, stride 1,024),
  change in the middle;
- ``32k vocabulary``: a Llama with a 32,000-token output layer (width 256, 2 layers) on 2,048 bp
  pairs, batch 4: lm-eval's ``hf`` (float32 log-softmax over the whole logits) against
  ``dna-hf`` (target log-probs only), for memory;
- ``1-nt controls 350 bp``: the single-nucleotide Llama on the shape of a paired control
  (``build controls``): 350 bp windows, the middle 150 bp shuffled;
- ``6-mer 2 kb random p``, float32 and bf16: a random Llama of width 256 (6 layers) on 2,052 bp
  pairs read as 6-mers, a 12 bp change at a random place (a shape where a pass's fixed cost,
  attention and the output layer weigh against sharing on a CPU).

Ideal speed-ups: ``2 / (2 - p)`` for the prefix fraction ``p`` = the change's start / the window
(``P + 2 (n - P)`` token passes instead of ``2 n``; with a random place, the sum of ``2 n`` over
the pairs / the sum of ``P + 2 (n - P)``); "plan" is the speed-up the cost model
(``causal_plan.CostModel``) predicts for the plan ``dna-hf`` follows when it shares (cost rule,
identical windows), computed from the token layout of the scenario's pairs without running the
model. Both rows keep ``dedupe`` on (its default), which
already scores a sliding window that is the same in both sequences once. Every row runs at
``--sharing-batch-size`` (8), on the CPU, in the scenario's dtype (float32 unless named).
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

from perturbation_bench.bench.measuring import in_fresh_process, measure
from perturbation_bench.bench.options import count
from perturbation_bench.errors import OptionsError
from perturbation_bench.wording import did_you_mean

CONFIG = "syn_human"


@dataclass(frozen=True)
class Scenario:
    """One row: model shape, pairs, where the change sits, and how the model is run."""

    name: str
    tokenizer: str  # "1-nt" or "6-mer"
    hidden: int
    layers: int
    length: int  # bp per sequence
    at: float | None  # the change starts at this fraction of the window (None: at random)
    patch: int = 6
    max_length: int | None = None
    vocab_size: int | None = None
    compare_hf: bool = False  # plain row is lm-eval's hf instead of dna-hf without sharing
    dtype: str = "float32"


SCENARIOS = [
    Scenario("6-mer p=0.1", "6-mer", 512, 4, 8196, 0.1),
    Scenario("6-mer p=0.5", "6-mer", 512, 4, 8196, 0.5),
    Scenario("6-mer p=0.9", "6-mer", 512, 4, 8196, 0.9),
    Scenario("6-mer random p", "6-mer", 512, 4, 8196, None, patch=12),
    Scenario("1-nt p=0.5", "1-nt", 256, 4, 8192, 0.5),
    Scenario("1-nt windows", "1-nt", 256, 4, 8192, 0.5, max_length=2048),
    Scenario("32k vocabulary", "1-nt", 256, 2, 2048, 0.5, vocab_size=32000, compare_hf=True),
    Scenario("1-nt controls 350 bp", "1-nt", 256, 4, 350, 0.5, patch=150),
    Scenario("6-mer 2 kb random p", "6-mer", 256, 6, 2052, None, patch=12),
    Scenario("6-mer 2 kb random p bf16", "6-mer", 256, 6, 2052, None, patch=12, dtype="bfloat16"),
]
REPEATS = 3
"""Runs of each row, alternating plain and default and which runs first (:func:`run_order`); the
best of them is reported."""


def scenario_pairs(scenario: Scenario, n: int) -> list[dict]:
    """The scenario's ``n`` random pairs (seeded)."""
    from perturbation_bench.fixtures.random_pairs import random_pairs

    return random_pairs(n, scenario.length, seed=0, patch=scenario.patch, at=scenario.at)


def token_layout(scenario: Scenario, start: int, pair: int = 0) -> tuple[list[int], list[int], int]:
    """Stand-in token lists of pair number ``pair`` whose change starts at base ``start``
    (equal except where the change is, and unlike any other pair's) and the first scored
    position, as dna-hf tokenizes such a pair; enough to plan the work."""
    if scenario.tokenizer == "6-mer":
        first, changed = 1, range(1 + start // 6, 1 + (start + scenario.patch - 1) // 6 + 1)
        n = 1 + scenario.length // 6
    else:
        first, changed = 1, range(1 + start, 1 + start + scenario.patch)
        n = 1 + scenario.length
    a = [pair + 2] * n
    b = [1 if i in changed else a[i] for i in range(n)]
    return a, b, first


def ideal_speedup(scenario: Scenario, starts: list[int]) -> float:
    """``sum 2 n / sum (P + 2 (n - P))`` over pairs whose changes start at ``starts``, ``P``
    the change's start in bases (``2 / (2 - p)`` when every change starts at ``p n``)."""
    n = scenario.length
    return 2 * n * len(starts) / sum(start + 2 * (n - start) for start in starts)


def planned_speedup(scenario: Scenario, starts: list[int], batch_size: int = 8) -> float:
    """The cost model's time without sharing / with the plan dna-hf follows when it shares,
    for pairs whose changes start at ``starts``."""
    from types import SimpleNamespace

    from perturbation_bench.models.causal_plan import CostModel, Piece, plan, token_windows

    pieces, pairs = [], []
    for index, start in enumerate(starts):
        a, b, first = token_layout(scenario, start, index)
        max_length = scenario.max_length or len(a)
        pairs.append((len(pieces), len(pieces) + 1))
        pieces += [
            [
                Piece(tuple(t[s:e]), target - s)
                for s, target, e in token_windows(len(t), first, max_length, max_length // 2)
            ]
            for t in (a, b)
        ]
    vocabulary = scenario.vocab_size or (6 + 4**6 if scenario.tokenizer == "6-mer" else 11)
    config = SimpleNamespace(
        hidden_size=scenario.hidden, num_hidden_layers=scenario.layers, vocab_size=vocabulary
    )
    h = scenario.hidden  # the random Llama's layers: GQA 4/2 heads, an MLP of 2 h
    cost = CostModel.of(config, batch_size, layer_weights=scenario.layers * 9 * h * h)
    plain = plan(pieces, [], cost, dedupe=True)  # both rows keep dedupe's default
    shared = plan(pieces, pairs, cost, dedupe=True)
    return plain.predicted(cost) / shared.predicted(cost)


def add_arguments(parser) -> None:
    """The ``bench --sharing`` options."""
    parser.add_argument(
        "--sharing",
        action="store_true",
        help="instead: the shared-prefix scenario table (perturbation_bench/bench/sharing.py)",
    )
    parser.add_argument(
        "--sharing-pairs",
        type=count,
        default=8,
        help="with --sharing: pairs per scenario (%(default)s)",
    )
    parser.add_argument(
        "--sharing-batch-size",
        type=count,
        default=8,
        help="with --sharing: lm-eval batch size of every row (%(default)s)",
    )
    parser.add_argument(
        "--scenario", action="append", default=[], help="with --sharing: only this scenario"
    )


def run(args: argparse.Namespace) -> int:
    """Measure every scenario and print the table; 1 if default and plain scores disagree."""
    chosen = chosen_scenarios(args.scenario)
    rows, agree = [], True
    with tempfile.TemporaryDirectory(prefix="pb-sharing-") as scratch:
        for scenario in chosen:
            pairs = scenario_pairs(scenario, args.sharing_pairs)
            folder = Path(scratch) / scenario.name.replace(" ", "_")
            model, data = _prepare(folder, scenario, pairs)
            metadata = {"data_dir": str(data), "config": CONFIG}
            if scenario.tokenizer == "6-mer":
                metadata["preset"] = "carbon"
            best = [None, None]  # plain, default: the fastest of REPEATS runs each
            for repeat in range(REPEATS):
                for way, (method, model_args) in run_order(_rows(scenario), repeat):
                    print(
                        f"measuring {scenario.name} ({repeat + 1}/{REPEATS}): {method} "
                        f"{model_args} ...",
                        flush=True,
                    )
                    run = in_fresh_process(
                        measure,
                        method,
                        str(model),
                        metadata,
                        args.sharing_pairs,
                        "cpu",
                        scenario.dtype,
                        str(args.sharing_batch_size),
                        model_args,
                    )
                    print(f"  {run.seconds:.2f} s", flush=True)
                    if best[way] is None or run.seconds < best[way].seconds:
                        best[way] = run
            rows.append((scenario, [pair["patch_start_in_seq"] for pair in pairs], *best))
            diff, same = scores_agree(best[0], best[1], scenario.dtype)
            agree = agree and same
            print(f"  max |dLL| {diff:.2e}", flush=True)
    print(format_table(rows, args.sharing_batch_size))
    if not agree:
        print(
            "MISMATCH: default and plain scores differ by more than the bound (sharing_choice.agree)"
        )
    return 0 if agree else 1


def chosen_scenarios(wanted: list[str]) -> list[Scenario]:
    """The scenarios ``--scenario`` names, in table order (every one where it names none).

    Raises:
        OptionsError: a name that is not a scenario's, with the nearest and every name.
    """
    names = [s.name for s in SCENARIOS]
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise OptionsError(
            f"--scenario {unknown[0]!r}: not a sharing scenario{did_you_mean(unknown[0], names)} "
            f"(the scenarios: {', '.join(names)})"
        )
    return [s for s in SCENARIOS if not wanted or s.name in wanted]


def run_order(rows: list, repeat: int) -> list:
    """``(way, row)`` of the plain and the default row in the order repeat ``repeat`` runs them:
    plain first on even repeats, default first on odd ones (A B B A ...), so that neither way
    always runs second, after the other warmed or loaded the machine."""
    order = list(enumerate(rows))
    return order[::-1] if repeat % 2 else order


def _rows(scenario: Scenario) -> list[tuple[str, dict]]:
    """The plain row and the default row of a scenario: lm-eval model and model arguments."""
    extra = {"max_length": scenario.max_length} if scenario.max_length else {}
    plain = ("hf", extra) if scenario.compare_hf else ("dna-hf", {**extra, "share_prefix": False})
    return [plain, ("dna-hf", extra)]


def scores_agree(plain, default, dtype: str) -> tuple[float, bool]:
    """The largest |LL difference| of two measurements and whether every LL agrees to
    ``sharing_choice.agree`` (float32: the tests' 1e-6 |LL| + 1e-3 nats)."""
    from perturbation_bench.models.sharing_choice import agree

    values = [
        (x, y)
        for p, q in zip(default.lls, plain.lls, strict=True)
        for x, y in zip(p, q, strict=True)
    ]
    largest = max((abs(x - y) for x, y in values), default=0.0)
    return largest, all(agree(x, y, dtype == "float32") for x, y in values)


def format_table(rows, batch_size: int = 8) -> str:
    """The scenario table (module docstring for the columns)."""
    lines = [
        "| scenario | plain pairs/s | default pairs/s | default / plain | auto chose (shared / plain s) | passes plain / default (batch 1) | ideal 2/(2-p) | plan | max abs dLL | scoring peak plain / default |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scenario, starts, plain, default in rows:
        speedup = plain.seconds / default.seconds
        diff, _ = scores_agree(plain, default, scenario.dtype)
        label = f"{scenario.name}" + (" (plain: lm-eval hf)" if scenario.compare_hf else "")
        lines.append(
            f"| {label} | {len(plain.lls) / plain.seconds:.2f} "
            f"| {len(default.lls) / default.seconds:.2f} | {speedup:.2f}x "
            f"| {choice_cell(default.measured)} | {passes_cell(plain)} / {passes_cell(default)} "
            f"| {ideal_speedup(scenario, starts):.2f}x "
            f"| {planned_speedup(scenario, starts, batch_size):.2f}x | {diff:.1e} "
            f"| {plain.scoring_bytes / 2**20:,.0f} / {default.scoring_bytes / 2**20:,.0f} MiB |"
        )
    return "\n".join(lines)


def choice_cell(measured: dict | None) -> str:
    """``share_prefix=auto``'s way and the times it measured; ``plan`` where nothing was timed."""
    if not measured or measured.get("chosen") is None:
        return "not timed (the plan decided)"
    seconds = measured["seconds"]
    return f"{measured['chosen']} ({seconds['shared']:.3f} / {seconds['plain']:.3f})"


def passes_cell(run) -> str:
    """A run's decoder passes and, in brackets, those of batch 1."""
    if run.passes is None:
        return "n/a"
    return f"{len(run.passes)} ({sum(rows == 1 for rows, _ in run.passes)})"


def _prepare(folder: Path, scenario: Scenario, pairs: list[dict]) -> tuple[Path, Path]:
    from perturbation_bench.fixtures.random_models import (
        kmer_tokenizer,
        save_random_llama,
        single_nucleotide_tokenizer,
    )
    from perturbation_bench.fixtures.random_pairs import write_parquet

    tokenizer = (
        kmer_tokenizer(6) if scenario.tokenizer == "6-mer" else single_nucleotide_tokenizer()
    )
    model = save_random_llama(
        folder / "model",
        tokenizer,
        layers=scenario.layers,
        hidden=scenario.hidden,
        max_positions=scenario.length + 2,
        vocab_size=scenario.vocab_size,
    )
    write_parquet(pairs, folder / "data", CONFIG)
    return model, folder / "data"
