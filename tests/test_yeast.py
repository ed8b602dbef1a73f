"""A real genome, offline: S. cerevisiae chrI + chrII with SGD's GFF3 (Debian's gbrowse-data,
fetched by scripts/fetch_yeast.sh, which .ci/run calls). Builds syn_yeast and motif_yeast with
2,048 bp windows, CDS controls and motif footprints in 40 of those controls, validates them
against the genome, checks independently that every CDS used
translates without an internal stop, and scores the chrI pairs with kmer-markov trained on chrII.

Then a mutation scan of chrI (every class, 150 per class), checked row by row by an independent
derivation, made into 8,192 bp variant pairs (chrI's 230 kb hold them whole), scored end to end
through lm_eval with kmer-markov counted on chrII (the composition floors of the docs), and with
tiny random dna-hf and dna-mlm models on a smaller scan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from Bio.Seq import Seq
from sklearn.metrics import average_precision_score, roc_auc_score

from dna_fixtures import build_arguments, cds_records, evaluate, read_fasta, rederive
from perturbation_bench.cli import main
from perturbation_bench.fixtures.random_models import (
    as_masked_lm_tokenizer,
    save_random_bert,
    save_random_llama,
    single_nucleotide_tokenizer,
)
from perturbation_bench.models.markov_chain import chain_for
from perturbation_bench.pairs.outcome import pairwise_accuracy
from perturbation_bench.tasks.pairing import logged_pairs

pytestmark = pytest.mark.slow  # the real genome, and lm_eval command lines

YEAST = Path(os.environ.get("PERTURBATION_BENCH_YEAST", Path(__file__).parents[1] / ".yeast"))
GFF3 = "yeast_chr1+2.gff3"


@pytest.fixture(scope="module")
def yeast() -> Path:
    if not (YEAST / GFF3).is_file():
        message = f"no yeast data in {YEAST}: run bash scripts/fetch_yeast.sh {YEAST}"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI fetches it; its absence there is a failure
        pytest.skip(message)
    return YEAST


@pytest.fixture(scope="module")
def built(yeast, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("yeast")
    genome = root / "genome.fa"
    genome.write_text((yeast / "chr1.fa").read_text() + (yeast / "chr2.fa").read_text())
    for kind in ("syn", "motif"):
        assert (
            main(
                build_arguments(
                    kind,
                    genome,
                    yeast / GFF3,
                    root / "out",
                    *("--window", "2048", "--flank", "512"),
                    species="yeast",
                    annotation="--gff3",
                )
            )
            == 0
        )
    assert (
        main(
            [
                "build",
                "controls",
                "--fasta",
                str(genome),
                "--gff3",
                str(yeast / GFF3),
                "--feature",
                "cds",
                "--shuffle",
                "dinucleotide",
                "--config",
                "controls_cds_yeast",
                "--out",
                str(root / "out"),
            ]
        )
        == 0
    )
    motifs = {"GCN4_LIKE": "ATGACTCAT", "REB1_LIKE": "TTACCCGG"}  # near one-hot matrices
    rows = {
        name: [[0.85 if base == b else 0.05 for b in "ACGT"] for base in consensus]
        for name, consensus in motifs.items()
    }
    (root / "yeast.meme").write_text(
        "MEME version 4\n\nALPHABET= ACGT\n\n"
        + "".join(
            f"MOTIF {name}\nletter-probability matrix: alength= 4 w= {len(matrix)}\n"
            + "".join(" ".join(map(str, row)) + "\n" for row in matrix)
            for name, matrix in rows.items()
        )
    )
    footprints = ["--motifs", str(root / "yeast.meme"), "--max-backgrounds", "40"]
    negatives = ["--backgrounds", str(root / "out" / "controls_cds_yeast")]
    arguments = [*footprints, *negatives, "--copies", "1,2", "--config", "footprints_yeast"]
    assert main(["build", "footprints", *arguments, "--out", str(root / "out")]) == 0
    # every kind, so validate checks every invariant
    return {"genome": genome, "out": root / "out", "root": root}


def test_the_yeast_datasets_validate_against_the_genome(built, capsys):
    assert main(["validate", str(built["out"]), "--fasta", str(built["genome"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if line.startswith(("FAIL", "SKIP"))], lines
    footprints = pq.read_table(built["out"] / "footprints_yeast")
    assert footprints.num_rows == 40 * 2 * 2 * 2  # backgrounds x motifs x copies x strands
    for check in ("insert_at_centre", "control_is_permutation"):
        assert f"PASS {check}: 0 of 320 rows break it" in lines
    for config, codon_source in (("syn_yeast", "s_cerevisiae_4932"), ("motif_yeast", None)):
        table = pq.read_table(built["out"] / config)
        assert table.num_rows > 500 and set(table.column("chr").to_pylist()) == {"chrI", "chrII"}
        if codon_source:
            assert set(table.column("codon_usage_source").to_pylist()) == {
                f"python-codon-tables:{codon_source}"
            }


def test_every_cds_used_translates_without_an_internal_stop(yeast, built):
    """Parsed here line by line, not with the package's annotation reader."""
    genome = read_fasta(built["genome"])
    parts = defaultdict(list)
    for line in (yeast / GFF3).read_text().splitlines():
        fields = line.split("\t")
        if len(fields) == 9 and fields[2] == "CDS":
            attributes = dict(kv.split("=", 1) for kv in fields[8].strip(";").split(";"))
            for parent in attributes["Parent"].split(","):
                parts[parent].append(
                    (fields[0], int(fields[3]), int(fields[4]), fields[6], int(fields[7]))
                )
    used = set()
    for config in ("syn_yeast", "motif_yeast"):
        used |= set(
            pq.read_table(built["out"] / config, columns=["transcript_id"]).column(0).to_pylist()
        )
    assert len(used) > 500
    for transcript in used:
        exons = sorted(
            parts[transcript], key=lambda p: p[1], reverse=parts[transcript][0][3] == "-"
        )
        cds = "".join(
            genome[c][s - 1 : e]
            if strand == "+"
            else str(Seq(genome[c][s - 1 : e]).reverse_complement())
            for c, s, e, strand, _ in exons
        )[exons[0][4] :]
        protein = str(Seq(cds[: len(cds) - len(cds) % 3]).translate())
        assert "*" not in protein[:-1], f"{transcript}: internal stop at codon {protein.index('*')}"


@pytest.fixture(scope="module")
def chr1_pairs(built) -> Path:
    """The chrI pairs of both configs, for scoring with a chain counted on chrII only."""
    data = built["root"] / "chrI"
    for config in ("syn_yeast", "motif_yeast"):
        table = pq.read_table(built["out"] / config)
        (data / config).mkdir(parents=True)
        pq.write_table(
            table.filter(pc.equal(table.column("chr"), "chrI")), data / config / "test.parquet"
        )
    return data


def test_the_kmer_markov_floor_through_the_lm_eval_command_line(yeast, chr1_pairs, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "out"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "lm_eval",
            "--model",
            "kmer-markov",
            "--model_args",
            f"fasta={yeast / 'chr2.fa'},order=5,counts={tmp_path / 'chr2-order5.npz'}",
            "--tasks",
            "perturbation_custom",
            "--log_samples",
            "--output_path",
            str(out),
            "--metadata",
            json.dumps({"data_dir": str(chr1_pairs), "config": "syn_yeast"}),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (results,) = out.glob("**/results_*.json")
    accuracy = json.loads(results.read_text())["results"]["perturbation_custom"][
        "pairwise_acc,pairs"
    ]
    chain = chain_for(yeast / "chr2.fa", 5, counts=str(tmp_path / "chr2-order5.npz"))
    rows = pq.read_table(chr1_pairs / "syn_yeast").to_pylist()
    direct = [
        (chain.log_likelihood("", r["original_sequence"]), chain.log_likelihood("", r["sequence"]))
        for r in rows
    ]
    assert accuracy == pytest.approx(pairwise_accuracy(direct))
    assert {r["chr"] for r in rows} == {"chrI"}  # the chain never saw these sequences


TASK = "perturbation_variants"


METRICS = (
    "pairwise_acc",
    "tie_rate",
    "margin",
    "auroc",
    "auprc",
    "auroc_by_chrom",
    "auprc_by_chrom",
)


def scan_and_pair(yeast, root, per_class: int, window: int):
    table = root / "chrI_mutations.parquet"
    assert (
        main(
            [
                "build",
                "mutations",
                "--fasta",
                str(yeast / "chr1.fa"),
                "--gff3",
                str(yeast / GFF3),
                "--out",
                str(table),
                "--per-class",
                str(per_class),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "build",
                "variants",
                "--variants",
                str(table),
                "--fasta",
                str(yeast / "chr1.fa"),
                "--config",
                "mutations_yeast",
                "--out",
                str(root / "pairs"),
                "--window",
                str(window),
            ]
        )
        == 0
    )
    return table, root / "pairs"


@pytest.fixture(scope="module")
def scan(yeast, tmp_path_factory):
    return scan_and_pair(yeast, tmp_path_factory.mktemp("yeast-scan"), 150, 8192)


def test_every_yeast_row_matches_the_independent_derivation(yeast, scan):
    table = pd.read_parquet(scan[0])
    summary = json.loads(scan[0].with_name(scan[0].name + ".summary.json").read_text())
    genome, transcripts = read_fasta(yeast / "chr1.fa"), cds_records(yeast / GFF3)
    for row in table.to_dict("records"):
        assert rederive(row, genome, transcripts) == row["consequence"], row
    coding = (
        "stop_gained",
        "start_lost",
        "stop_lost",
        "frameshift_variant",
        "missense_variant",
        "synonymous_variant",
    )
    assert all(summary["counts"][c] == 150 for c in coding)
    assert summary["counts"]["splice_donor_variant"] > 0  # chrI's few introns
    assert summary["notes"] == ["intergenic_variant skipped: no base lies 5000 bp from every CDS"]


def kmer_markov_floor(yeast, order: int, data, tmp_path, command_line: bool):
    """``(results, per-pair LLs)`` of kmer-markov counted on chrII, through the lm_eval command
    line or its Python API."""
    model_args = f"fasta={yeast / 'chr2.fa'},order={order},counts={tmp_path / f'chr2-{order}.npz'}"
    metadata = {"data_dir": str(data), "config": "mutations_yeast"}
    if not command_line:
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager

        from perturbation_bench.paths import tasks_dir

        manager = TaskManager(
            include_path=str(tasks_dir()), include_defaults=False, metadata=metadata
        )
        result = simple_evaluate(
            model="kmer-markov",
            model_args=model_args,
            tasks=[TASK],
            task_manager=manager,
            log_samples=True,
        )
        return result["results"][TASK], logged_pairs(result, TASK)
    out = tmp_path / f"order{order}"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "lm_eval",
            "--model",
            "kmer-markov",
            "--model_args",
            model_args,
            "--tasks",
            TASK,
            "--log_samples",
            "--output_path",
            str(out),
            "--metadata",
            json.dumps(metadata),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (results,) = out.glob("**/results_*.json")
    (samples,) = out.glob(f"**/samples_{TASK}_*.jsonl")
    rows = sorted(
        (json.loads(line) for line in samples.read_text().splitlines()),
        key=lambda sample: sample["doc_id"],
    )
    return json.loads(results.read_text())["results"][TASK], [
        tuple(float(x) for x in r["filtered_resps"][0])
        for r in rows  # the file holds strings
    ]


def test_the_composition_floor_through_the_lm_eval_command_line(yeast, scan, tmp_path):
    """kmer-markov counted on chrII at orders 2, 5 (the command line) and 8; the metrics equal
    scikit-learn on the logged pairs. The README's floors are these runs."""
    pairs = pd.read_parquet(scan[1] / "mutations_yeast")
    labelled = pairs["label"].notna().to_numpy()
    labels = pairs["label"][labelled].astype(bool)
    for order in (2, 5, 8):
        got, lls = kmer_markov_floor(yeast, order, scan[1], tmp_path, command_line=order == 5)
        margins = [a - b for (a, b), keep in zip(lls, labelled, strict=True) if keep]
        assert {f"{m},pairs" for m in METRICS} <= set(got) and len(lls) == len(pairs)
        assert got["auroc,pairs"] == pytest.approx(roc_auc_score(labels, margins))
        assert got["auprc,pairs"] == pytest.approx(average_precision_score(labels, margins))
        print(f"order {order}: " + ", ".join(f"{m} {got[f'{m},pairs']:.4f}" for m in METRICS))


@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
def test_tiny_neural_models_report_every_metric_on_a_yeast_scan(yeast, tmp_path_factory, model):
    root = tmp_path_factory.mktemp(f"yeast-{model}")
    _, data = scan_and_pair(yeast, root, 12, 512)
    tokenizer = single_nucleotide_tokenizer()
    if model == "dna-hf":
        path = save_random_llama(root / "m", tokenizer, max_positions=520)
    else:
        path = save_random_bert(root / "m", as_masked_lm_tokenizer(tokenizer), max_positions=520)
    result = evaluate(
        str(path), [TASK], {"data_dir": str(data), "config": "mutations_yeast"}, model=model
    )
    got = result["results"][TASK]
    assert {f"{m},pairs" for m in METRICS} <= set(got)
    pairs = pd.read_parquet(data / "mutations_yeast")
    lls = logged_pairs(result, TASK)
    labelled = pairs["label"].notna().to_numpy()
    margins = [a - b for (a, b), keep in zip(lls, labelled, strict=True) if keep]
    assert got["auroc,pairs"] == pytest.approx(
        roc_auc_score(pairs["label"][labelled].astype(bool), margins)
    )


def test_the_report_draws_the_class_ladder_of_a_scan(yeast, scan, tmp_path):
    from matplotlib.image import imread

    from perturbation_bench.report.make import make_report
    from perturbation_bench.report.variant_metrics import LADDER

    metadata = {"data_dir": str(scan[1]), "config": "mutations_yeast"}
    chain = f"fasta={yeast / 'chr2.fa'},order=3,counts={tmp_path / 'chr2-3.npz'}"
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    tracker = EvaluationTracker(output_path=str(tmp_path / "run"))
    result = simple_evaluate(
        model="kmer-markov",
        model_args=chain,
        tasks=[TASK],
        log_samples=True,
        task_manager=TaskManager(
            include_path=str(tasks_dir()), include_defaults=False, metadata=metadata
        ),
        evaluation_tracker=tracker,
    )
    lls = logged_pairs(result, TASK)  # before the tracker rewrites the samples in place
    tracker.save_results_aggregated(
        results={k: v for k, v in result.items() if k != "samples"}, samples=result["samples"]
    )
    tracker.save_results_samples(task_name=TASK, samples=result["samples"][TASK])
    report = make_report([tmp_path / "run"], tmp_path / "report", n_boot=200)
    ladder = report["variants"]["class_ladder"]
    classes = [r["consequence"] for r in ladder]
    assert classes == [c for c in LADDER if c in classes] and len(classes) == 8
    pairs = pd.read_parquet(scan[1] / "mutations_yeast")
    for row in ladder:  # each class's accuracy and margin, recomputed from the logged pairs
        mine = [
            (a, b)
            for (a, b), c in zip(lls, pairs["consequence"], strict=True)
            if c == row["consequence"]
        ]
        assert row["n"] == len(mine)
        assert row["pairwise_acc"] == pytest.approx(sum(a > b for a, b in mine) / len(mine))
        assert row["margin_mean"] == pytest.approx(sum(a - b for a, b in mine) / len(mine))
        assert row["bootstrap_95"][0] <= row["pairwise_acc"] <= row["bootstrap_95"][1]
    assert imread(tmp_path / "report" / "class_ladder.png").shape[:2] == (500, 900)
    assert "## Class ladder" in (tmp_path / "report" / "report.md").read_text()
