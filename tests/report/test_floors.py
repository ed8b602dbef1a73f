"""Each model read against its composition floor (``report/floors.py``): the report's accuracy on
the pairs the floor gets wrong, its McNemar p, the margins' Spearman and the variant AUPRCs by
floor quintile equal an independent computation from the two runs' logged samples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, spearmanr
from sklearn.metrics import average_precision_score

from dna_fixtures import build_variants, evaluate, labelled_snvs, random_genome
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.report.make import make_report
from perturbation_bench.tasks.pairing import logged_pairs


@pytest.fixture(scope="module")
def genome(tmp_path_factory):
    return random_genome(tmp_path_factory.mktemp("floor-genome"), {"chr1": 1500, "chr2": 1200}, 9)


def run(path, task, metadata, folder, **model_args):
    result = evaluate(path, [task], metadata, output_path=folder, **model_args)
    return result, next(folder.iterdir())


def test_a_model_is_read_against_its_floor_on_the_pairs_composition_does_not_decide(
    genome, tiny_models, tmp_path
):
    fasta, _ = genome
    write_parquet(random_pairs(60, 90, seed=5, patch=20), tmp_path / "data", "custom")
    metadata = {"data_dir": str(tmp_path / "data"), "config": "custom"}
    task = "perturbation_custom"
    model, model_folder = run(tiny_models["char"], task, metadata, tmp_path / "m", model="dna-hf")
    floor, floor_folder = run(
        str(fasta), task, metadata, tmp_path / "f", model="kmer-markov", order=2
    )
    report = make_report([model_folder, floor_folder], tmp_path / "report", n_boot=20)
    (row,) = report["floors"]["paired"]
    m = np.array([o > p for o, p in logged_pairs(model, task)])
    f = np.array([o > p for o, p in logged_pairs(floor, task)])
    assert 0 < (~f).sum() < len(f)
    assert row["beyond_floor"]["n"] == (~f).sum()
    assert row["beyond_floor"]["pairwise_acc"] == pytest.approx(m[~f].mean())
    assert row["with_floor"]["pairwise_acc"] == pytest.approx(m[f].mean())
    b, c = int((m & ~f).sum()), int((~m & f).sum())
    assert (row["model_right_floor_wrong"], row["floor_right_model_wrong"]) == (b, c)
    assert row["mcnemar_exact_p"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue)
    margins = [np.array([o - p for o, p in logged_pairs(r, task)]) for r in (model, floor)]
    assert row["margin_spearman"] == pytest.approx(spearmanr(*margins)[0])
    assert row["floor_kind"] == "composition"
    assert "## Beyond the floors" in (tmp_path / "report" / "report.md").read_text()


def test_a_run_given_with_floor_is_a_floor_and_without_one_there_is_no_section(
    tiny_models, pair_data, tmp_path
):
    metadata = {"data_dir": str(pair_data)}
    task = "perturbation_syn_human"
    _, a = run(tiny_models["char"], task, metadata, tmp_path / "a", model="dna-hf")
    _, b = run(
        tiny_models["kmer6"], task, {**metadata, "preset": "carbon"}, tmp_path / "b", model="dna-hf"
    )
    alone = make_report([a, b], tmp_path / "r1", n_boot=20)
    assert alone["floors"] == {"paired": [], "variants": []}
    assert "Beyond the floors" not in (tmp_path / "r1" / "report.md").read_text()
    (row,) = make_report([a], tmp_path / "r2", n_boot=20, floors=[b])["floors"]["paired"]
    assert row["n_common"] == 8 and row["floor"] != row["model"]
    assert row["floor_kind"] == "given (--floor)"


def test_variant_auprc_is_read_within_the_floor_s_score_quintiles(genome, tiny_models, tmp_path):
    fasta, sequences = genome
    snvs = labelled_snvs(sequences, 60, 2, 60, lambda i, rng: rng.random() < 0.4)
    snvs.to_csv(tmp_path / "v.csv", index=False)
    table = build_variants(tmp_path, tmp_path / "v.csv", fasta, "v", window=40)
    metadata = {"data_dir": str(tmp_path / "out"), "config": "v"}
    task = "perturbation_variants"
    model, model_folder = run(tiny_models["char"], task, metadata, tmp_path / "m", model="dna-hf")
    floor, floor_folder = run(
        str(fasta), task, metadata, tmp_path / "f", model="kmer-markov", order=3
    )
    report = make_report(
        [model_folder, floor_folder], tmp_path / "report", n_boot=20, se_boot=5, se_chrom_boot=5
    )
    (row,) = report["floors"]["variants"]
    labels = table["label"].astype(bool).to_numpy()
    scores = {
        name: np.array([o - p for o, p in logged_pairs(r, task)])
        for name, r in (("m", model), ("f", floor))
    }
    assert row["model_auprc"] == pytest.approx(average_precision_score(labels, scores["m"]))
    assert row["floor_auprc"] == pytest.approx(average_precision_score(labels, scores["f"]))
    # quintiles of the floor's score, ties broken by pair_id: the report's own pair ids
    pairs = pd.read_parquet(tmp_path / "report" / "pairs.parquet")
    floor_rows = pairs[pairs["floor"]].set_index("pair_id").sort_index()
    order = np.argsort(np.lexsort((floor_rows.index.to_numpy(), floor_rows["score"].to_numpy())))
    quintile = order * 5 // len(order)
    model_rows = pairs[~pairs["floor"]].set_index("pair_id").loc[floor_rows.index]
    for q in row["by_floor_quintile"]:
        inside = quintile == q["quintile"] - 1
        y = model_rows["label"].astype(bool).to_numpy()[inside]
        assert (q["n"], q["positives"]) == (inside.sum(), y.sum())
        if 0 < y.sum() < len(y):
            expected = average_precision_score(y, model_rows["score"].to_numpy()[inside])
            assert q["model_auprc"] == pytest.approx(expected)


def test_the_floor_section_holds_both_tables_when_both_kinds_of_task_ran():
    from perturbation_bench.report.floors import markdown

    part = {"n": 4, "pairwise_acc": 0.5, "wilson_95": [0.1, 0.9], "thin": True}
    paired = {
        "model": "m", "task": "perturbation_x", "floor": "f", "floor_kind": "composition",
        "floor_accuracy": 0.75,
        "beyond_floor": part, "with_floor": part, "mcnemar_exact_p": 1.0, "margin_spearman": 0.2,
    }  # fmt: skip
    quintile = {"quintile": 1, "n": 5, "positives": 2, "model_auprc": 0.6}
    variant = {
        "model": "m", "task": "perturbation_variants", "floor": "f", "floor_kind": "composition",
        "n_common": 5,
        "model_auprc": 0.6, "floor_auprc": 0.4, "by_floor_quintile": [quintile],
    }  # fmt: skip
    text = "\n".join(markdown([paired], [variant]))
    assert (
        "| m | perturbation_x | f (composition) | 0.750 | 0.500 [0.100, 0.900] (4) (thin) |" in text
    )
    assert (
        "| m | perturbation_variants | f (composition) | 5 | 0.600 | 0.400 | Q1: 0.600 (2/5) |"
        in text
    )


def test_a_floor_that_shares_no_pair_with_the_runs_is_refused(tmp_path):
    from dna_fixtures import write_run
    from perturbation_bench.errors import OptionsError

    model = write_run(
        tmp_path / "model",
        "perturbation_syn_human",
        [(-1.0, -2.0)] * 3,
        model="dna-hf",
        model_args={"pretrained": "m"},
    )
    floor = write_run(tmp_path / "floor", "perturbation_motif_human", [(-1.0, -2.0)] * 3)
    with pytest.raises(
        OptionsError,
        match=r"--floor .*floor: shares no pair with the other runs \(its tasks: "
        r"perturbation_motif_human; theirs: perturbation_syn_human\)",
    ):
        make_report([model], tmp_path / "r", n_boot=20, floors=[floor])
    assert not (tmp_path / "r" / "report.md").exists()


def test_beyond_the_floor_holds_the_floor_s_ties_and_a_cell_is_thin_below_ten_pairs(tmp_path):
    """19 pairs: the floor ties on 4 and gets 6 wrong (beyond: 10, not thin) and 9 right (with:
    9, thin); the model is right on the 4 tied pairs and 2 of the wrong ones (6 of 10), and on 5
    of the 9, tying one of the others, which counts as wrong (strict)."""
    from dna_fixtures import write_run

    right, wrong, tie = (-1.0, -2.0), (-2.0, -1.0), (-1.0, -1.0)
    floor_lls = [tie] * 4 + [wrong] * 6 + [right] * 9
    model_lls = [right] * 4 + [right] * 2 + [wrong] * 4 + [right] * 5 + [tie] + [wrong] * 3
    from perturbation_bench.pairs.settings import TaskSettings

    task, paired = "perturbation_syn_human", TaskSettings(data="sha256:aa", score=None)
    model = write_run(
        tmp_path / "model", task, model_lls, "dna-hf", {"pretrained": "m"}, settings=paired
    )
    floor = write_run(tmp_path / "floor", task, floor_lls, settings=paired)  # kmer-markov
    (row,) = make_report([model, floor], tmp_path / "r", n_boot=20)["floors"]["paired"]
    assert (row["n_common"], row["floor_accuracy"]) == (19, 9 / 19)
    beyond, with_floor = row["beyond_floor"], row["with_floor"]
    assert (beyond["n"], beyond["pairwise_acc"], beyond["thin"]) == (10, 6 / 10, False)
    assert (with_floor["n"], with_floor["pairwise_acc"], with_floor["thin"]) == (9, 5 / 9, True)
    assert (row["model_right_floor_wrong"], row["floor_right_model_wrong"]) == (6, 4)
    assert row["mcnemar_exact_p"] == pytest.approx(binomtest(6, 10, 0.5).pvalue)


def test_tied_floor_scores_are_split_into_quintiles_in_order_of_pair_id():
    """10 variants, the floor's scores tied in two runs of four: ranked by score, ties by
    pair_id, p05 p06 | p07 p08 | p01 p02 | p03 p04 | p00 p09 (rows given in reverse order);
    each quintile's positives tell its members apart from any other order of the ties."""
    from perturbation_bench.report.floors import floor_variant_comparisons

    ids = [f"p{i:02d}" for i in range(10)]
    floor_score = dict(zip(ids, [2.0, 1, 1, 1, 1, 0, 0, 0, 0, 3], strict=True))
    positive = {"p05", "p07", "p08", "p01", "p00", "p09"}
    model_score = {i: float(k) for k, i in enumerate(ids)}  # each positive below its negative
    rows = [
        {"task": "perturbation_variants", "model": model, "floor": model == "f",
         "floor_kind": "composition" if model == "f" else None, "pair_id": i,
         "label": i in positive, "score": (floor_score if model == "f" else model_score)[i]}
        for model in ("f", "m")
        for i in reversed(ids)
    ]  # fmt: skip
    (row,) = floor_variant_comparisons(pd.DataFrame(rows))
    quintiles = row["by_floor_quintile"]
    assert [(q["quintile"], q["n"], q["positives"]) for q in quintiles] == [
        (1, 2, 1),
        (2, 2, 2),
        (3, 2, 1),
        (4, 2, 0),
        (5, 2, 2),
    ]
    aps = [q["model_auprc"] for q in quintiles]
    assert aps[0] == aps[2] == 0.5 and all(np.isnan(aps[i]) for i in (1, 3, 4))  # one class: NaN


def test_a_random_weights_run_is_a_floor_named_by_its_seed_in_the_table_and_the_section(tmp_path):
    """A dna-hf run that records random_init in its scorer settings is read as a floor of the
    trained run of the same checkpoint (named with its seed even alone among its runs), and of
    a run without the setting nothing is a floor."""
    from dna_fixtures import write_run
    from perturbation_bench.pairs.settings import TaskSettings

    right, wrong = (-1.0, -2.0), (-2.0, -1.0)
    task, paired = "perturbation_syn_human", TaskSettings(data="sha256:aa", score=None)
    args = {"pretrained": "ckpt"}
    trained = write_run(tmp_path / "t", task, [right] * 6 + [wrong] * 2, "dna-hf", args, paired)
    random = write_run(
        tmp_path / "r",
        task,
        [wrong] * 4 + [right] * 4,
        "dna-hf",
        {**args, "random_init": "true", "seed": "7"},
        paired,
        provenance={"model": "dna-hf", "settings": {"random_init": True, "seed": 7}},
    )
    report = make_report([trained, random], tmp_path / "rep", n_boot=20)
    (row,) = report["floors"]["paired"]
    assert (row["model"], row["floor"]) == ("ckpt", "ckpt random_init=True seed=7")
    assert row["floor_kind"] == "random weights" and row["floor_accuracy"] == 0.5
    assert row["beyond_floor"]["n"] == 4 and row["beyond_floor"]["pairwise_acc"] == 1.0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "| ckpt random_init=True seed=7 (random weights) |" in text
    plain = write_run(tmp_path / "p", task, [wrong] * 8, "dna-hf", {"pretrained": "c2"}, paired)
    assert make_report([trained, plain], tmp_path / "rep2", n_boot=20)["floors"]["paired"] == []
