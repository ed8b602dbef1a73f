"""Test material built at test time: tiny DNA tokenizers and models (three tokenizer kinds), and the
Python-API runner the tests share.

Nothing here touches the network. Every builder is seeded, so a test run is reproducible.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import pandas as pd
import pytest
import torch
from Bio.Seq import Seq
from tokenizers import Tokenizer, models, trainers

from perturbation_bench.commands.demo import save_as_the_cli
from perturbation_bench.dna import random_dna
from perturbation_bench.fixtures.random_models import (
    SPECIAL_TOKENS,
    kmer_tokenizer,
    save_random_llama,
    single_nucleotide_tokenizer,
    wrap_tokenizer,
)
from perturbation_bench.pairs.fields import TASK
from perturbation_bench.pairs.settings import TaskSettings
from perturbation_bench.tasks.pairing import logged_pairs

TOKENIZER_KINDS = ("char", "kmer6", "bpe")
REPO = Path(__file__).parents[1]
"""The repository's root (its scripts/, yaml/, docs/)."""
DP_DRIVER = Path(__file__).with_name("dp_driver.py")
"""The script that runs a task through lm-eval in each of several processes."""
RESUME_DRIVER = Path(__file__).with_name("resume_driver.py")
"""The script that runs a task with lm-eval's cache, to be killed and resumed."""


def build_tokenizer(kind: str):
    """A DNA tokenizer: single nucleotides, non-overlapping 6-mers, or a small trained BPE."""
    if kind == "char":
        return single_nucleotide_tokenizer()
    if kind == "kmer6":
        return kmer_tokenizer(6)
    elif kind == "bpe":
        core = Tokenizer(models.BPE(unk_token="<oov>"))
        trainer = trainers.BpeTrainer(
            vocab_size=48, special_tokens=SPECIAL_TOKENS, initial_alphabet=list("ACGTN")
        )
        rng = random.Random(7)
        corpus = [random_dna(rng, 200) + "AAAA" * rng.randint(0, 5) for _ in range(200)]
        core.train_from_iterator(corpus, trainer)
    else:
        raise ValueError(kind)
    return wrap_tokenizer(core)


def pair_document(rc_average: bool = False, **fields) -> dict:
    """A document as the tasks make it: ``fields`` and its task's settings (default preset)."""
    return {**fields, TASK: TaskSettings(rc_average=rc_average)}


def write_run(
    folder: Path,
    task: str,
    lls,
    model: str = "kmer-markov",
    model_args=None,
    settings=None,
    pairs=None,
    docs=None,
    model_name: str = "kepu77od",
    provenance: dict | None = None,
) -> Path:
    """A run folder as ``lm_eval --output_path FOLDER --log_samples`` writes it, without lm-eval:
    ``results_<date>.json`` (``config``: model, model_args) and ``samples_<task>_<date>.jsonl``,
    one sample per ``(LL_original, LL_perturbed)`` of ``lls``. ``pairs``: their ``(original,
    perturbed)`` sequences (seeded random 40 bp pairs by default); ``settings``: the task settings
    each document carries (the default preset's); ``docs``: more fields per document;
    ``provenance``: what this package's models record under ``config.perturbation_bench``."""
    folder.mkdir(parents=True, exist_ok=True)
    if pairs is None:
        rng = random.Random(len(lls))
        pairs = [
            (o, o[:20] + random_dna(rng, 4) + o[24:]) for o in (random_dna(rng, 40) for _ in lls)
        ]
    settings = dict(settings or TaskSettings(data="sha256:aa"))
    results = {
        "model_name": model_name,
        "config": {
            "model": model,
            "model_args": model_args or {},
            "limit": None,
            **({"perturbation_bench": provenance} if provenance else {}),
        },
    }
    (folder / "results_2026-12-01T00-00-00.json").write_text(json.dumps(results))
    with (folder / f"samples_{task}_2026-12-01T00-00-00.jsonl").open("w") as handle:
        for i, ((original, perturbed), pair) in enumerate(zip(pairs, lls, strict=True)):
            doc = {
                "original_sequence": original,
                "sequence": perturbed,
                TASK: settings,
                **(docs[i] if docs else {}),
            }
            handle.write(
                json.dumps({"doc_id": i, "doc": doc, "filtered_resps": [list(pair)]}) + "\n"
            )
    return folder


def reverse_complement(sequence: str) -> str:
    """Independent of the package's own: base by base."""
    return "".join(
        {"A": "T", "C": "G", "G": "C", "T": "A", "N": "N"}[b] for b in reversed(sequence)
    )


def reference_ll(model, tokenizer, prefix: str, sequence: str) -> float:
    """sum_t log p(x_t | x_<t) over the sequence's tokens, fp32, conditioned on the prefix tokens
    (the BOS token when the prefix is empty)."""
    if prefix:
        context = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    else:
        context = [tokenizer.bos_token_id]
    continuation = tokenizer(sequence, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context + continuation])
    with torch.no_grad():
        logits = model(ids).logits[0].float()
    log_probs = torch.log_softmax(logits[:-1], dim=-1)
    targets = ids[0, 1:]
    per_token = log_probs.gather(1, targets[:, None])[:, 0]
    return per_token[len(context) - 1 :].sum().item()


def build_model(kind: str, folder: Path) -> Path:
    """Save a random 2-layer Llama with tokenizer ``kind`` to ``folder``; return the folder."""
    return save_random_llama(folder, build_tokenizer(kind))


def evaluate(
    model_path: str,
    tasks: list[str],
    metadata: dict,
    model: str = "hf",
    output_path: Path | None = None,
    include: list = (),
    use_cache: str | None = None,
    batch_size: int = 4,
    **model_args,
) -> dict:
    """Run tasks through lm-eval's Python API on the CPU with only this package's task folder
    indexed, the model arguments merged into the task metadata as the CLI does; with ``output_path``, save results and samples files as ``lm_eval --output_path
    --log_samples`` does; ``include``: more task folders to index; ``use_cache``: as
    ``lm_eval --use_cache``."""
    import importlib

    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from perturbation_bench.families import MODELS
    from perturbation_bench.paths import tasks_dir

    if model in MODELS:  # registered by importing it, with the autoload hook on or off
        importlib.import_module(MODELS[model].target.split(":")[0])

    if model == "kmer-markov":  # model_path is the genome it counts
        model_args = {"fasta": model_path, "order": 3, **model_args}
    else:
        model_args = {"pretrained": model_path, "dtype": "float32", **model_args}
    metadata = model_args | metadata  # as lm-eval's CLI merges --model_args into --metadata
    folders = [str(tasks_dir()), *map(str, include)]
    manager = TaskManager(include_path=folders, include_defaults=False, metadata=metadata)
    tracker = EvaluationTracker(output_path=str(output_path)) if output_path else None
    result = simple_evaluate(
        model=model,
        model_args=model_args,
        tasks=tasks,
        task_manager=manager,
        device="cpu",
        batch_size=batch_size,
        log_samples=True,
        use_cache=use_cache,
        evaluation_tracker=tracker,
    )
    if tracker is not None:
        save_as_the_cli(tracker, result)
    return result


TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
"""torchrun on one machine, on a free port (tests may run side by side: pytest -n)."""


def free_port() -> int:
    """A TCP port free on this machine now (for a launcher that takes no port 0)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(command: list[str]) -> subprocess.CompletedProcess:
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def run_two_processes(model_path, data_dir, tmp_path, model: str, *task_and_metadata):
    """``dp_driver.py`` under torchrun with 2 CPU processes (a task and its metadata JSON
    optional); the finished process and what rank 0 wrote: results and logged pairs."""
    out = tmp_path / "dp.json"
    command = [*TORCHRUN, "--nproc_per_node", "2"]
    arguments = [str(DP_DRIVER), str(model_path), str(data_dir), str(out), model]
    run = launch([*command, *arguments, *task_and_metadata])
    return run, json.loads(out.read_text())


def two_processes_match_one(model_path: str, pair_data, tmp_path, model: str):
    """Run the task under torchrun with 2 CPU processes; assert it equals a 1-process run."""

    task = "perturbation_syn_human"
    single = evaluate(model_path, [task], {"data_dir": str(pair_data)}, model=model)
    run, parallel = run_two_processes(model_path, pair_data, tmp_path, model)
    assert_same_results(parallel["results"], single["results"][task])
    for got, expected in zip(parallel["lls"], logged_pairs(single, task), strict=True):
        assert got == pytest.approx(list(expected), rel=1e-6, abs=1e-3)
    return run


def assert_same_results(got: dict, expected: dict) -> None:
    """Equal task results, floats within the sharing tolerance (1e-6 relative + 1e-3 absolute:
    each process batches other pairs together, which moves float32 sums by about 1e-6; one
    flipped pair moves pairwise_acc by 1/n, far more)."""

    expected = json.loads(json.dumps(expected, default=str))
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-3), key
        else:
            assert got[key] == value, key


def crop_one(original: str, perturbed: str, length: int) -> tuple[int, bool]:
    """The crop start and overflow of one pair, through the tasks' vectorised rule."""
    import numpy as np
    import pyarrow as pa

    from perturbation_bench.pairs.changes import changed_spans
    from perturbation_bench.tasks.crop import crop_starts

    spans = changed_spans(pa.array([original]), pa.array([perturbed]), ignore_case=True)
    (start,), (overflows,) = crop_starts(np.array([len(original)]), spans, length)
    return int(start), bool(overflows)


def masked_sum(model, tokenizer, ids, masked, targets_per_sequence, max_length):
    """Sum, per target sequence, log P(target_i | ids with `masked` masked) over `masked`,
    each position read in one window of max_length tokens as the definition pins it."""
    totals = [0.0] * len(targets_per_sequence)
    todo = sorted(masked)
    while todo:
        if len(ids) <= max_length:
            run, start = todo, 0
        else:
            run = [i for i in todo if i - todo[0] < max_length]
            centre = (run[0] + run[-1] + 1) // 2
            start = min(max(0, centre - max_length // 2), len(ids) - max_length)
        window = [
            tokenizer.mask_token_id if start + k in masked else token
            for k, token in enumerate(ids[start : start + max_length])
        ]
        table = log_probs(model, window)
        for s, targets in enumerate(targets_per_sequence):
            totals[s] += sum(table[i - start, targets[i]].item() for i in run)
        todo = todo[len(run) :]
    return totals


def reference_pair(model, tokenizer, original: str, perturbed: str, max_length: int):
    """The pinned definition, computed pair by pair without batching."""
    o = tokenizer(original, return_offsets_mapping=True)
    p = tokenizer(perturbed, return_offsets_mapping=True)
    if len(o["input_ids"]) == len(p["input_ids"]):
        diff = {
            i for i, (a, b) in enumerate(zip(o["input_ids"], p["input_ids"], strict=True)) if a != b
        }
        if not diff:
            return 0.0, 0.0
        return tuple(
            masked_sum(
                model, tokenizer, o["input_ids"], diff, [o["input_ids"], p["input_ids"]], max_length
            )
        )
    changed = [i for i in range(len(original)) if original[i] != perturbed[i]]
    s, e = changed[0], changed[-1] + 1
    out = []
    for enc in (o, p):
        span = {i for i, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < e and b > s}
        out += masked_sum(model, tokenizer, enc["input_ids"], span, [enc["input_ids"]], max_length)
    return tuple(out)


def read_fasta(path: Path) -> dict[str, str]:
    genome, name = {}, None
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            name = line[1:].split()[0]
            genome[name] = []
        else:
            genome[name].append(line.strip().upper())
    return {k: "".join(v) for k, v in genome.items()}


def cds_records(annotation: Path) -> dict[str, list[tuple]]:
    """transcript -> [(chrom, start0, end0, strand)] in transcript order, from GTF or SGD GFF3."""
    parts = defaultdict(list)
    for line in annotation.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) != 9 or fields[2] != "CDS":
            continue
        match = re.search(r'transcript_id "([^"]+)"', fields[8])
        parents = (
            [match.group(1)]
            if match
            else re.search(r"Parent=([^;]+)", fields[8]).group(1).split(",")
        )
        for parent in parents:
            parts[parent].append((fields[0], int(fields[3]) - 1, int(fields[4]), fields[6]))
    return {t: sorted(p, key=lambda r: r[1], reverse=p[0][3] == "-") for t, p in parts.items()}


def _splice_class(sequence: str, p: int, exons) -> str:
    """The splice class of a change at ``p`` outside the CDS, decided again from scratch."""
    strand = exons[0][3]
    for upstream, downstream in pairwise(exons):
        intron = (upstream[2], downstream[1]) if strand == "+" else (downstream[2], upstream[1])
        text = sequence[intron[0] : intron[1]]
        text = text if strand == "+" else reverse_complement(text)
        if not (text.startswith("GT") and text.endswith("AG")):
            continue
        from_5 = p - intron[0] if strand == "+" else intron[1] - 1 - p  # 0 = intron base +1
        if from_5 in (0, 1):
            return "splice_donor_variant"
        if from_5 in (len(text) - 2, len(text) - 1):
            return "splice_acceptor_variant"
    return "not at a splice site"


def rederive(row: dict, genome: dict, transcripts: dict) -> str:
    """The class of one table row, decided again from scratch."""
    chrom, p = row["chrom"], row["pos"] - 1
    if row["consequence"] == "intergenic_variant":
        spans = [
            (min(e[1] for e in ex), max(e[2] for e in ex))
            for ex in transcripts.values()
            if ex[0][0] == chrom
        ]
        far = all(p < start - 5000 or p >= end + 5000 for start, end in spans)
        return "intergenic_variant" if far and genome[chrom][p] == row["ref"] else "not intergenic"
    exons = transcripts[row["transcript_id"]]
    before, positions = spliced_cds(genome, exons)
    if len(row["ref"]) == 2 and len(row["alt"]) == 1:  # VCF deletion: the base after pos goes
        assert genome[chrom][p : p + 2] == row["ref"]
        mutated = dict(genome, **{chrom: genome[chrom][: p + 1] + genome[chrom][p + 2 :]})
        inside = p + 1 in positions[3:-3]
        return "frameshift_variant" if inside and len(before) % 3 == 0 else "not a frameshift"
    assert genome[chrom][p] == row["ref"] and len(row["alt"]) == 1
    mutated = dict(genome, **{chrom: genome[chrom][:p] + row["alt"] + genome[chrom][p + 1 :]})
    after, _ = spliced_cds(mutated, exons)
    if p not in positions:
        return _splice_class(genome[chrom], p, exons)
    index = positions.index(p) // 3
    old, new = str(Seq(before).translate()), str(Seq(after).translate())
    if index == 0:
        return "start_lost" if before[:3] == "ATG" and after[:3] != "ATG" else "?"
    if index == len(old) - 1:
        return "stop_lost" if old[-1] == "*" and new[-1] != "*" else "?"
    if new[index] == "*":
        return "stop_gained"
    return "synonymous_variant" if new == old else "missense_variant"


def log_probs(model, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), -1)


def spliced_cds(genome: dict, exons) -> tuple[str, list[int]]:
    seq, positions = "", []
    for chrom, start, end, strand in exons:
        piece = genome[chrom][start:end]
        seq += piece if strand == "+" else reverse_complement(piece)
        positions += (
            list(range(start, end)) if strand == "+" else list(range(end - 1, start - 1, -1))
        )
    return seq, positions


def expected_edge_pair(sequences, chrom: str, pos: int, ref: str, alt: str, window: int, edge: str):
    """Independent construction of the pad and truncate rules: the chromosome with ``window`` Ns
    on either side (pad) or as it is (truncate), edited, then cut (None where a deletion would
    need bases past the end, which only padding supplies)."""
    seq, p = sequences[chrom], pos - 1
    first, last = p - window // 2, p - window // 2 + window
    if edge == "pad":
        padded, shift = "N" * window + seq + "N" * window, window
    else:
        padded, shift = seq, 0
        first, last = max(0, first), min(len(seq), last)
    edited = padded[: p + shift] + alt + padded[p + shift + len(ref) :]
    reference = padded[first + shift : last + shift]
    alternate = edited[first + shift : last + shift]
    if len(alternate) < len(reference):
        return None
    return reference, alternate, first, p - first


def random_genome(folder: Path, lengths: dict[str, int], seed: int) -> tuple[Path, dict[str, str]]:
    """``folder/g.fa``: random chromosomes of ``lengths`` (seeded; 60 bases a line), and their
    sequences."""
    rng = random.Random(seed)
    sequences = {name: "".join(rng.choice("ACGT") for _ in range(n)) for name, n in lengths.items()}
    path = Path(folder) / "g.fa"
    with path.open("w") as handle:
        for name, seq in sequences.items():
            handle.write(
                f">{name}\n" + "\n".join(seq[i : i + 60] for i in range(0, len(seq), 60)) + "\n"
            )
    return path, sequences


def upstream_ll(model, tokenizer, sequence: str) -> float:
    """TraitGym's, biofoundation's and Evo 2's sum: the raw window's tokens, nothing before
    them, ``sum_{t >= 1} log p(x_t | x_<t)`` in float32 log-softmax, summed in float64."""
    ids = torch.tensor([tokenizer(sequence, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        log_probs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
    return log_probs.gather(1, ids[0, 1:, None])[:, 0].double().sum().item()


def build_variants(tmp_path, variants: Path, fasta: Path, config="toy", *extra, window=200):
    """``perturbation-bench build variants`` into ``tmp_path/out``; the config's rows."""
    from perturbation_bench.cli import main

    args = ["build", "variants", "--variants", str(variants), "--fasta", str(fasta)]
    args += ["--config", config, "--out", str(tmp_path / "out"), "--window", str(window), *extra]
    assert main(args) == 0
    return pd.read_parquet(tmp_path / "out" / config / "test-00000-of-00001.parquet")


def snvs_at(sequences: dict[str, str], sites, label=None) -> pd.DataFrame:
    """SNVs at 1-based ``sites`` (``(chrom, pos)``), each to the first other base; ``label(i)``
    labels the i-th (None: no label column)."""
    rows = []
    for i, (chrom, pos) in enumerate(sites):
        ref = sequences[chrom][pos - 1]
        row = {"chrom": chrom, "pos": pos, "ref": ref, "alt": "ACGT".replace(ref, "")[0]}
        rows.append(row if label is None else {**row, "label": label(i)})
    return pd.DataFrame(rows)


def traitgym_like(sequences, n: int = 60, seed: int = 0) -> pd.DataFrame:
    """TraitGym's Mendelian columns and types: chrom without chr, 1-based pos, SNVs, bool label."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        chrom = rng.choice(["1", "2"])
        seq = sequences[f"chr{chrom}"]
        pos = rng.randrange(1, len(seq) + 1)
        ref = seq[pos - 1]
        rows.append(
            {
                "chrom": chrom,
                "pos": pos,
                "ref": ref,
                "alt": rng.choice([b for b in "ACGT" if b != ref]),
                "OMIM": f"MIM {i}",
                "consequence": rng.choice(["PLS", "dELS", "missense_variant"]),
                "label": i % 4 == 0,
                "tss_dist": rng.randrange(10**5),
                "match_group": f"g{i // 10}",
            }
        )
    return pd.DataFrame(rows).astype({"pos": "int64", "label": bool})


def labelled_snvs(sequences: dict[str, str], n: int, seed: int, flank: int, label) -> pd.DataFrame:
    """``n`` seeded SNVs on ``sequences`` (alternating between the first two chromosomes, at least
    ``flank`` bases from either end), each labelled ``label(i, rng)``, duplicates dropped."""
    rng = random.Random(seed)
    names = list(sequences)[:2]
    rows = []
    for i in range(n):
        chrom = names[i % 2]
        pos = rng.randrange(flank, len(sequences[chrom]) - flank)
        ref = sequences[chrom][pos - 1]
        alt = rng.choice([b for b in "ACGT" if b != ref])
        rows.append({"chrom": chrom, "pos": pos, "ref": ref, "alt": alt, "label": label(i, rng)})
    return pd.DataFrame(rows).drop_duplicates(["chrom", "pos", "alt"])


TOY_WINDOW, TOY_FLANK = 400, 100
"""The window and flank of the datasets built on the synthetic genome (tests/dataset)."""


def build_arguments(
    kind, fasta, annotation_path, out, *extra, species: str = "human", annotation: str = "--gtf"
) -> list[str]:
    """The command line of ``perturbation-bench build KIND`` (syn or motif) on a genome and its
    annotation (``annotation="--gff3"``: a GFF3) for ``species``, writing under ``out``, then
    ``extra``."""
    return [
        "build",
        kind,
        "--fasta",
        str(fasta),
        annotation,
        str(annotation_path),
        "--species",
        species,
        "--out",
        str(out),
        *extra,
    ]


def build_toy_dataset(kind, fasta, gtf, out, *extra, annotation: str = "--gtf") -> Path:
    """``perturbation-bench build KIND`` (syn or motif) on a genome and its annotation (a GTF;
    ``annotation="--gff3"``: a GFF3), in :data:`TOY_WINDOW` bp windows with :data:`TOY_FLANK` bp
    flanks; the parquet file it wrote."""
    from perturbation_bench.cli import main

    toy = ["--window", str(TOY_WINDOW), "--flank", str(TOY_FLANK)]
    toy += ["--assembly", "toy", "--annotation-source", "toy"]
    assert main(build_arguments(kind, fasta, gtf, out, *toy, *extra, annotation=annotation)) == 0
    return out / f"{kind}_human" / "test-00000-of-00001.parquet"


def consensus_of(rows) -> str:
    """The base of highest probability at each position, the first of ACGT on a tie."""
    out = ""
    for row in rows:
        best = 0
        for b in range(1, 4):
            if row[b] > row[best]:
                best = b
        out += "ACGT"[best]
    return out
