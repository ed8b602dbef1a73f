"""Embedding-distance variant scores (``models/embedding_scoring.py``): the variant task's AUROC
and AUPRC equal an independent computation from the models' hidden states, each score computed
by its anchor's own code where it has one (gpn's distances for flatten, BEND's scipy cosine at the
variant's token, Nucleotide Transformer-style mean pooling), on a causal LM (``dna-hf``, its
backbone) and on encoders loaded as ``AutoModel`` (``dna-mlm``: BERT without its LM head)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.spatial import distance as scipy_distance
from sklearn.metrics import average_precision_score, roc_auc_score
from transformers import AutoModel, AutoTokenizer

from dna_fixtures import (
    build_tokenizer,
    build_variants,
    evaluate,
    labelled_snvs,
    random_genome,
    reverse_complement,
)
from perturbation_bench.cli import main
from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert
from perturbation_bench.models.embedding_scoring import EmbeddingScore, signed_distance
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_variants"
TOLERANCE = 1e-6  # on AUROC/AUPRC and on each score, relative to its size


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """40 labelled SNVs (binary, seeded) in 64 bp windows of a random genome: the data folder
    and the pairs as built (reference window, alternate window, label)."""
    root = tmp_path_factory.mktemp("embedding")
    fasta, sequences = random_genome(root, {"chr1": 1200, "chr2": 900}, 31)
    labelled_snvs(sequences, 40, 4, 80, lambda i, rng: i % 2 == 0).to_csv(
        root / "v.csv", index=False
    )
    return root / "out", build_variants(root, root / "v.csv", fasta, "vep", window=64)


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    """A random BERT masked LM framing inputs as <s> ... </s>, read here without its head."""
    folder = tmp_path_factory.mktemp("bert")
    return str(save_random_bert(folder, as_masked_lm_tokenizer(build_tokenizer("char")), layers=3))


def hidden(model, tokenizer, sequence: str, layer) -> tuple[np.ndarray, list[int]]:
    """Independent fp32 hidden states (tokens x D) of a sequence, and its special-token mask."""
    encoding = tokenizer(sequence, return_special_tokens_mask=True)
    with torch.no_grad():
        out = model(torch.tensor([encoding["input_ids"]]), output_hidden_states=True)
    states = out.last_hidden_state if layer == "last" else out.hidden_states[layer]
    return states[0].double().numpy(), encoding["special_tokens_mask"]


def anchor_score(model, tokenizer, reference: str, alternate: str, distance, pooling, layer):
    """One strand's score by each anchor's own formula."""
    from gpn.ss.run_vep_embeddings import cosine_distance, euclidean_distance, inner_product

    (r, special), (a, _) = (hidden(model, tokenizer, s, layer) for s in (reference, alternate))
    if pooling == "flatten":  # gpn's functions take (batch, tokens, D)
        gpn = {"euclidean": euclidean_distance, "inner_product": inner_product}
        gpn["cosine"] = cosine_distance
        value = float(gpn[distance](torch.tensor(r)[None], torch.tensor(a)[None])[0])
        return -value if distance == "inner_product" else value
    if pooling == "mean":  # Nucleotide Transformer: the mean over the non-special tokens
        keep = [i for i, flag in enumerate(special) if not flag]
        r, a = r[keep].mean(axis=0), a[keep].mean(axis=0)
        return {
            "l2": scipy_distance.euclidean,
            "l1": scipy_distance.cityblock,
            "cosine": scipy_distance.cosine,
        }[distance](r, a)
    base = next(i for i, (x, y) in enumerate(zip(reference, alternate, strict=True)) if x != y)
    token = base + 1  # one token per base after <s>
    return scipy_distance.cosine(r[token], a[token])  # BEND's


def expected_scores(path, table, distance, pooling, layer, rc_average):
    model = AutoModel.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    scores = []
    for reference, alternate in zip(table["original_sequence"], table["sequence"], strict=True):
        strands = [(reference, alternate)]
        if rc_average:
            strands.append((reverse_complement(reference), reverse_complement(alternate)))
        values = [
            anchor_score(model, tokenizer, r, a, distance, pooling, layer) for r, a in strands
        ]
        scores.append(sum(values) / len(values))
    return np.array(scores)


CASES = [  # (model, distance, pooling, layer, rc_average)
    ("dna-mlm", "euclidean", "flatten", "last", True),
    ("dna-hf", "euclidean", "flatten", "last", True),
    ("dna-mlm", "inner_product", "flatten", "last", False),
    ("dna-mlm", "cosine", "flatten", 2, False),
    ("dna-mlm", "l2", "mean", "last", False),
    ("dna-mlm", "l1", "mean", 1, False),
    ("dna-mlm", "cosine", "variant", 1, True),
]


def table_identity(data) -> str:
    """The data identity a run records of the ``vep`` config (``pairs/identity.py``)."""
    from perturbation_bench.pairs.identity import data_identity

    return data_identity(sorted((data / "vep").glob("*.parquet")))


@pytest.mark.parametrize("model, distance, pooling, layer, rc_average", CASES)
def test_the_ranking_metrics_equal_the_anchors_scores_from_the_hidden_states(
    variants, encoder, tiny_models, model, distance, pooling, layer, rc_average
):
    data, table = variants
    path = encoder if model == "dna-mlm" else tiny_models["char"]
    arguments = {"scoring": "embedding", "distance": distance, "pooling": pooling}
    if layer != "last":
        arguments["layer"] = layer
    result = evaluate(
        path,
        [TASK],
        {"config": "vep", "data_dir": str(data), "rc_average": rc_average},
        model=model,
        **arguments,
    )
    # AutoModel reads the encoder without its head, and the causal LM's backbone
    expected = expected_scores(path, table, distance, pooling, layer, rc_average)
    got = np.array([o - p for o, p in logged_pairs(result, TASK)])
    assert got == pytest.approx(expected, rel=TOLERANCE, abs=1e-9)
    labels = table["label"].astype(bool)
    scores = result["results"][TASK]
    assert scores["auroc,pairs"] == pytest.approx(roc_auc_score(labels, expected), abs=TOLERANCE)
    assert scores["auprc,pairs"] == pytest.approx(
        average_precision_score(labels, expected), abs=TOLERANCE
    )
    assert 0.0 < scores["auroc,pairs"] < 1.0
    recorded = result["config"]["perturbation_bench"]["tasks"][TASK]  # both models record it
    assert (recorded["rc_average"], recorded["data"]) == (rc_average, table_identity(data))


@pytest.mark.parametrize("task", ["perturbation_syn_human", "perturbation_motif_human"])
def test_a_paired_task_is_refused_in_one_line(encoder, pair_data, task):
    with pytest.raises(
        OptionsError, match=r"scoring=embedding scores a variant or a motif footprint by a distance"
    ):
        evaluate(
            encoder,
            [task],
            {"data_dir": str(pair_data)},
            model="dna-mlm",
            scoring="embedding",
            distance="euclidean",
            pooling="flatten",
        )


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"scoring": "embedding", "pooling": "flatten"}, r"needs distance= one of euclidean, "),
        ({"scoring": "embedding", "distance": "cos", "pooling": "flatten"}, r"got 'cos'"),
        ({"scoring": "embedding", "distance": "l1"}, r"needs pooling= one of flatten, mean"),
        ({"scoring": "marginal", "distance": "l1"}, r"distance applies to scoring=embedding only"),
        (
            {"scoring": "embedding", "distance": "l1", "pooling": "mean", "layer": "middle"},
            "got 'middle'",
        ),
        (
            {"scoring": "embedding", "distance": "l1", "pooling": "mean", "layer": "-1"},
            r"layer must be last or a whole number K >= 0 .*got '-1'",
        ),
    ],
)
def test_embedding_arguments_are_checked_in_one_line(arguments, message):
    with pytest.raises(OptionsError, match=message):
        EmbeddingScore.from_arguments(
            arguments.pop("scoring"),
            **{k: arguments.get(k) for k in ("distance", "pooling", "layer")},
        )


def test_a_layer_the_model_lacks_is_refused_before_scoring(encoder, variants):
    data, _ = variants
    with pytest.raises(OptionsError, match=r"layer=9: the model has 4 hidden states"):
        evaluate(
            encoder,
            [TASK],
            {"config": "vep", "data_dir": str(data)},
            model="dna-mlm",
            scoring="embedding",
            distance="l2",
            pooling="mean",
            layer=9,
        )


@pytest.mark.parametrize(
    "distance, name",
    [
        ("euclidean", "Embeddings.plus.euclidean_distance"),
        ("inner_product", "Embeddings.minus.inner_product"),
        ("cosine", "Embeddings.plus.cosine_distance"),
    ],
)
def test_scores_are_named_as_traitgym_names_them(distance, name):
    """The pooling and layer join the name unless both are the defaults (flatten, last): a
    flatten score at layer K is not the last layer's, nor a mean score at the last layer."""
    assert EmbeddingScore(distance, "flatten").name == name
    assert EmbeddingScore.from_arguments("embedding", distance, "flatten", "last").name == name
    assert EmbeddingScore(distance, "mean", 2).name == f"{name}[pooling=mean,layer=2]"
    assert EmbeddingScore(distance, "flatten", 2).name == f"{name}[pooling=flatten,layer=2]"
    assert EmbeddingScore(distance, "flatten", 0).name == f"{name}[pooling=flatten,layer=0]"
    assert EmbeddingScore(distance, "mean").name == f"{name}[pooling=mean,layer=last]"


def test_each_distance_is_its_formula_on_the_flattened_matrices():
    generator = torch.Generator().manual_seed(3)
    r, a = torch.randn(5, 4, generator=generator), torch.randn(5, 4, generator=generator)
    x, y = r.double().numpy().ravel(), a.double().numpy().ravel()
    assert signed_distance(r, a, "euclidean") == pytest.approx(np.linalg.norm(x - y), rel=1e-12)
    assert signed_distance(r, a, "l2") == signed_distance(r, a, "euclidean")
    assert signed_distance(r, a, "l1") == pytest.approx(np.abs(x - y).sum(), rel=1e-12)
    assert signed_distance(r, a, "cosine") == pytest.approx(scipy_distance.cosine(x, y), rel=1e-12)
    assert signed_distance(r, a, "inner_product") == pytest.approx(-(x @ y), rel=1e-12)


def run_check(capsys, *arguments) -> tuple[int, str, str]:
    status = main(["check", *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_check_and_the_run_agree_on_where_an_embedding_score_applies(
    encoder, variants, pair_data, capsys
):
    data, _ = variants
    model_args = f"pretrained={encoder},scoring=embedding,distance=l2,pooling=mean"
    common = ("--model", "dna-mlm", "--model_args", model_args)
    status, _, err = run_check(
        capsys,
        *common,
        *("--tasks", "perturbation_syn_human", "--metadata", f'{{"data_dir": "{pair_data}"}}'),
    )
    assert (
        status == 2
        and "scoring=embedding scores a variant or a motif footprint by a distance" in err
    )
    metadata = f'{{"data_dir": "{data}", "config": "vep"}}'
    status, out, _ = run_check(capsys, *common, "--tasks", TASK, "--metadata", metadata)
    assert status == 0 and "options and files OK" in out
    abs_llr = f'{{"data_dir": "{data}", "config": "vep", "score": "abs_llr"}}'
    status, _, err = run_check(capsys, *common, "--tasks", TASK, "--metadata", abs_llr)
    assert status == 2 and "score: abs_llr reads a log-likelihood ratio" in err
    # the model has 3 layers: 4 hidden states, 0 to 3; check reads that from its config alone
    for layer, fits in ((3, True), (4, False)):
        deep = ("--model", "dna-mlm", "--model_args", f"{model_args},layer={layer}")
        status, _, err = run_check(capsys, *deep, "--tasks", TASK, "--metadata", metadata)
        assert (status, "layer=4: the model has 4 hidden states" in err) == (
            (0, False) if fits else (2, True)
        )


def test_the_report_names_the_embedding_score_and_keeps_it_apart_from_the_llr_run(
    encoder, variants, tmp_path
):
    from perturbation_bench.report.make import make_report

    data, table = variants
    metadata = {"config": "vep", "data_dir": str(data)}
    embedding = {"scoring": "embedding", "distance": "euclidean", "pooling": "flatten"}
    results = {}
    for name, arguments in (("llr", {}), ("embedding", embedding)):
        results[name] = evaluate(
            encoder, [TASK], metadata, model="dna-mlm", output_path=tmp_path / name, **arguments
        )
    # a distance has no direction: no pairwise accuracy, tie rate or margin in lm-eval's results
    metrics = {key.split(",")[0] for key in results["embedding"]["results"][TASK]}
    assert {"auroc", "auprc"} <= metrics and not metrics & {"pairwise_acc", "tie_rate", "margin"}
    assert "pairwise_acc,pairs" in results["llr"]["results"][TASK]
    folders = [next((tmp_path / name).iterdir()) for name in results]
    report = make_report(folders, tmp_path / "report", n_boot=50, se_boot=10, se_chrom_boot=10)
    rows = {row["score"]: row for row in report["variants"]["summary"]}
    assert set(rows) == {"llr", "Embeddings.plus.euclidean_distance"}
    for name, score in (("llr", "llr"), ("embedding", "Embeddings.plus.euclidean_distance")):
        assert rows[score]["auroc"] == pytest.approx(results[name]["results"][TASK]["auroc,pairs"])
    embedding_row = rows["Embeddings.plus.euclidean_distance"]
    assert embedding_row["model"] != rows["llr"]["model"]
    # named by its score (which stands for its scoring, distance, pooling and layer), the LLR
    # run by the scoring that tells it apart: no setting a run lacks, never "=None"
    base = rows["llr"]["model"].removesuffix(" scoring=marginal")
    assert embedding_row["model"] == f"{base} Embeddings.plus.euclidean_distance"
    assert rows["llr"]["model"] == f"{base} scoring=marginal"
    assert [row["model"] for row in report["summary"]] == [rows["llr"]["model"]]  # no accuracy


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    """Every alternate of 6 positions: 18 variants, 3 sharing each reference window."""
    root = tmp_path_factory.mktemp("scan")
    fasta, sequences = random_genome(root, {"chr1": 600}, 8)
    rows = [
        {"chrom": "chr1", "pos": pos, "ref": sequences["chr1"][pos - 1], "alt": alt, "label": k % 2}
        for k, pos in enumerate(range(200, 206))
        for alt in "ACGT"
        if alt != sequences["chr1"][pos - 1]
    ]
    pd.DataFrame(rows).to_csv(root / "v.csv", index=False)
    command = ["build", "variants", "--variants", str(root / "v.csv"), "--fasta", str(fasta)]
    assert main([*command, "--config", "scan", "--out", str(root / "out"), "--window", "48"]) == 0
    return root / "out"


@pytest.mark.parametrize("layer, per_pass", [("last", 4), (1, 1), (3, 1)])
def test_each_distinct_window_runs_once_and_a_middle_layer_one_window_a_pass(
    encoder, scan, monkeypatch, layer, per_pass
):
    """18 pairs hold 6 reference and 18 alternate windows: 24 run, batch_size=4 a forward pass
    for the last layer; ``layer=K`` (the last one's index too) returns every layer's states, so
    one window a pass: 24 passes, at most one window's states of every layer at a time."""
    from perturbation_bench.models.embedding_scoring import EmbeddingScorer

    seen, sizes = [], []
    original = EmbeddingScorer._hidden

    def recording(self, windows):
        seen.extend(tuple(window) for window in windows)
        sizes.append(len(windows))
        return original(self, windows)

    monkeypatch.setattr(EmbeddingScorer, "_hidden", recording)
    evaluate(
        encoder,
        [TASK],
        {"config": "scan", "data_dir": str(scan)},
        model="dna-mlm",
        batch_size=4,
        scoring="embedding",
        distance="l2",
        pooling="mean",
        layer=layer,
    )
    assert len(seen) == len(set(seen)) == 24
    assert max(sizes) == per_pass  # equal-length windows batched up to batch_size, or one
    assert (len(sizes) == 24) == (per_pass == 1)


@pytest.mark.parametrize(
    "model_args, message",
    [
        ("scoring=embedding,pooling=mean", "scoring=embedding needs distance= one of"),
        ("distance=l2", "distance applies to scoring=embedding only (scoring=marginal)"),
        ("scoring=pll,pooling=mean", "pooling applies to scoring=embedding only (scoring=pll)"),
    ],
)
def test_check_refuses_embedding_arguments_that_make_no_score(
    encoder, variants, capsys, model_args, message
):
    data, _ = variants
    status, _, err = run_check(
        capsys,
        *("--model", "dna-mlm", "--model_args", f"pretrained={encoder},{model_args}"),
        *("--tasks", TASK, "--metadata", f'{{"data_dir": "{data}", "config": "vep"}}'),
    )
    assert status == 2 and message in err, err


@pytest.mark.parametrize(
    "layer, fits", [(3, True), (4, False), (-1, False), (-4, False), (0, True)]
)
def test_a_layer_index_must_be_one_of_the_models_hidden_states(layer, fits):
    """3 layers: hidden states 0 (the embeddings) to 3; no index from the end (K >= 0)."""
    from types import SimpleNamespace

    from perturbation_bench.models.embedding_scoring import check_layer

    score, config = EmbeddingScore("l2", "mean", layer), SimpleNamespace(num_hidden_layers=3)
    check_layer(score, SimpleNamespace())  # no count in the config: the forward pass checks
    if fits:
        check_layer(score, config)
    else:
        with pytest.raises(OptionsError, match=rf"layer={layer}: the model has 4 hidden states"):
            check_layer(score, config)


def test_footprints_by_embedding_are_dart_evals_cosine_accuracy(encoder, tmp_path):
    """Each row's motif and control windows against its raw background: the task's
    ``background_acc`` is the share of rows whose motif moves the mean-pooled embedding further
    (cosine distance, strict), computed here independently, and no likelihood metric is
    reported."""
    import random

    import pandas as pd

    rng = random.Random(6)
    meme = ["MEME version 5", "", "ALPHABET= ACGT", ""]
    for name, consensus in (("M1", "TGACGTCA"), ("M2", "CACGTG")):
        meme += [f"MOTIF {name}", f"letter-probability matrix: alength= 4 w= {len(consensus)}"]
        meme += [" ".join("0.85" if b == base else "0.05" for b in "ACGT") for base in consensus]
    (tmp_path / "m.meme").write_text("\n".join(meme) + "\n")
    backgrounds = "".join(
        f">bg{k}\n{''.join(rng.choice('ACGT') for _ in range(50))}\n" for k in range(5)
    )
    (tmp_path / "bg.fa").write_text(backgrounds)
    build = ["build", "footprints", "--motifs", str(tmp_path / "m.meme"), "--backgrounds"]
    build += [str(tmp_path / "bg.fa"), "--config", "fp", "--out", str(tmp_path / "out")]
    assert main(build) == 0
    rows = pd.read_parquet(tmp_path / "out" / "fp")
    result = evaluate(
        encoder,
        ["perturbation_footprints"],
        {"data_dir": str(tmp_path / "out"), "config": "fp"},
        model="dna-mlm",
        scoring="embedding",
        distance="cosine",
        pooling="mean",
        output_path=tmp_path / "run",
    )
    got = result["results"]["perturbation_footprints"]
    metrics = {key.split(",")[0] for key in got if key.endswith(",pairs")}
    assert metrics == {"background_acc", "background_acc_stderr"}
    model = AutoModel.from_pretrained(encoder, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(encoder)

    def distance(a: str, b: str) -> float:
        return anchor_score(model, tokenizer, a, b, "cosine", "mean", "last")

    beats = [
        distance(motif, background) > distance(control, background)
        for motif, control, background in zip(
            rows["original_sequence"], rows["sequence"], rows["background_sequence"], strict=True
        )
    ]
    assert 0 < sum(beats) < len(beats)  # the rule is not decided by the data alone
    assert got["background_acc,pairs"] == pytest.approx(np.mean(beats), abs=1e-12)
    from perturbation_bench.report.make import make_report

    report = make_report([next((tmp_path / "run").iterdir())], tmp_path / "report", n_boot=20)
    assert report["summary"] == [] and report["footprints"]["motifs"] == []  # no likelihoods


def test_mean_pooling_leaves_out_the_tokens_of_a_dna_prefix(encoder, scan):
    """dna_prefix "<s>" starts every window with a token of its own (after the tokenizer's
    <s>): the mean is over the window's bases alone, as computed here from the offsets; the
    mean with the prefix's token in would differ."""
    prefix, table = "<s>", pd.read_parquet(scan / "scan")
    model = AutoModel.from_pretrained(encoder, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(encoder)

    def pooled(sequence: str, with_prefix: bool) -> np.ndarray:
        encoding = tokenizer(
            prefix + sequence, return_special_tokens_mask=True, return_offsets_mapping=True
        )
        with torch.no_grad():
            states = model(torch.tensor([encoding["input_ids"]])).last_hidden_state[0].double()
        first = 0 if with_prefix else len(prefix)
        rows = [
            i
            for i, (start, end) in enumerate(encoding["offset_mapping"])
            if end > start and start >= first
        ]
        assert len(rows) == len(sequence) + with_prefix  # one token per base, and the prefix's
        return states[rows].mean(dim=0).numpy()

    def distances(with_prefix: bool) -> np.ndarray:
        return np.array(
            [
                scipy_distance.euclidean(pooled(r, with_prefix), pooled(a, with_prefix))
                for r, a in zip(table["original_sequence"], table["sequence"], strict=True)
            ]
        )

    result = evaluate(
        encoder,
        [TASK],
        {"config": "scan", "data_dir": str(scan), "dna_prefix": prefix},
        model="dna-mlm",
        scoring="embedding",
        distance="l2",
        pooling="mean",
    )
    got = np.array([o - p for o, p in logged_pairs(result, TASK)])
    assert got == pytest.approx(distances(False), rel=TOLERANCE, abs=1e-9)
    assert not np.allclose(got, distances(True), rtol=1e-3)


def test_a_window_of_exactly_max_length_tokens_is_scored(encoder, scan):
    """The scan's 48 bp windows are 50 tokens with <s> and </s>: scored at max_length=50, as
    without a limit, and refused at 49."""
    metadata = {"config": "scan", "data_dir": str(scan)}
    arguments = {"model": "dna-mlm", "scoring": "embedding", "distance": "l2", "pooling": "flatten"}
    limited = evaluate(encoder, [TASK], metadata, max_length=50, **arguments)
    free = evaluate(encoder, [TASK], metadata, **arguments)
    assert logged_pairs(limited, TASK) == logged_pairs(free, TASK)
    assert len(logged_pairs(free, TASK)) == 18
    with pytest.raises(
        DataValidationError,
        match=r": 50 tokens, more than the model's max_length=49; an embedding is taken of the "
        r"whole window \(build shorter windows\)$",
    ):
        evaluate(encoder, [TASK], metadata, max_length=49, **arguments)
