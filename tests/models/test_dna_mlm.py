"""The dna-mlm model: masked-marginal scores over the differing positions, against an independent
fp32 computation of the pinned definition (1e-4 nats), for 1-nt, 6-mer and BPE tokenizers, with
windows, with rc_average, and on a third-party architecture (GPN)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from dna_fixtures import (
    build_tokenizer,
    evaluate,
    log_probs,
    reference_pair,
    reverse_complement,
    two_processes_match_one,
)
from perturbation_bench.errors import TokenizationError, UnsupportedTaskError
from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert
from perturbation_bench.models.dna_mlm import DnaMaskedLM
from perturbation_bench.models.masked_inputs import windows
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"
TOLERANCE = 1e-4  # nats


@pytest.fixture(scope="module")
def masked_models(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("mlm")
    return {
        kind: str(save_random_bert(root / kind, as_masked_lm_tokenizer(build_tokenizer(kind))))
        for kind in ("char", "kmer6", "bpe")
    }


def check(path, pair_data, metadata, trim=1, rc=False, max_length=None, **model_args):
    if max_length:
        model_args["max_length"] = max_length
    result = evaluate(
        path, [TASK], {"data_dir": str(pair_data), **metadata}, model="dna-mlm", **model_args
    )
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    limit = max_length or model.config.max_position_embeddings  # the tokenizers set no limit
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    got = logged_pairs(result, TASK)
    assert len(got) == len(rows)
    for pair, row in zip(got, rows, strict=True):
        o, p = (s[: len(s) - len(s) % trim] for s in (row["original_sequence"], row["sequence"]))
        expected = reference_pair(model, tokenizer, o, p, limit)
        if rc:
            flipped = reference_pair(
                model, tokenizer, reverse_complement(o), reverse_complement(p), limit
            )
            expected = tuple((a + b) / 2 for a, b in zip(expected, flipped, strict=True))
        assert pair == pytest.approx(expected, abs=TOLERANCE)
    return result, got


@pytest.mark.parametrize(
    "kind, metadata, trim",
    [("char", {}, 1), ("kmer6", {"preset": "nucleotide_transformer"}, 6), ("bpe", {}, 1)],
)
def test_scores_equal_the_pinned_definition(masked_models, pair_data, kind, metadata, trim):
    result, got = check(masked_models[kind], pair_data, metadata, trim)
    scores = result["results"][TASK]
    assert scores["tie_rate,pairs"] == 0.0
    assert scores["pairwise_acc,pairs"] == sum(a > b for a, b in got) / len(got)


def test_bpe_pairs_of_different_token_counts_are_covered(masked_models, pair_data):
    tokenizer = AutoTokenizer.from_pretrained(masked_models["bpe"])
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    counts = [
        (
            len(tokenizer(r["original_sequence"])["input_ids"]),
            len(tokenizer(r["sequence"])["input_ids"]),
        )
        for r in rows
    ]
    assert any(a != b for a, b in counts) and any(a == b for a, b in counts)


@pytest.mark.parametrize("kind, max_length", [("char", 40), ("char", 16), ("bpe", 24)])
def test_windows_when_the_pair_is_longer_than_the_model(
    masked_models, pair_data, kind, max_length, caplog
):
    with caplog.at_level("WARNING"):
        check(masked_models[kind], pair_data, {}, max_length=max_length)
    assert f"longer than max_length={max_length} tokens" in caplog.text


def test_rc_average_scores_each_strands_pair(masked_models, pair_data):
    check(masked_models["char"], pair_data, {"rc_average": True}, rc=True)


@pytest.mark.parametrize(
    "n_tokens, masked, max_length",
    [(10, [2, 5], 20), (100, [50], 20), (100, [0, 1, 99], 20), (300, list(range(0, 300, 7)), 16)],
)
def test_windows_score_every_masked_position_once_inside_its_window(n_tokens, masked, max_length):
    covered = []
    for start, run in windows(n_tokens, masked, max_length):
        assert 0 <= start and start + max_length >= (n_tokens if n_tokens <= max_length else 0)
        assert all(start <= i < start + max_length for i in run)
        covered += run
    assert covered == masked


def test_identical_pairs_tie_at_zero(masked_models, pair_data, tmp_path):
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    from perturbation_bench.fixtures.random_pairs import write_parquet

    write_parquet([dict(r, sequence=r["original_sequence"]) for r in rows], tmp_path, "syn_human")
    result = evaluate(masked_models["char"], [TASK], {"data_dir": str(tmp_path)}, model="dna-mlm")
    assert set(logged_pairs(result, TASK)) == {(0.0, 0.0)}
    assert result["results"][TASK]["pairwise_acc,pairs"] == 0.0


def test_unknown_tokens_and_other_tasks_are_refused(masked_models, pair_data):
    with pytest.raises(TokenizationError, match="unknown token '<oov>'"):
        evaluate(masked_models["kmer6"], [TASK], {"data_dir": str(pair_data)}, model="dna-mlm")
    from lm_eval.api.instance import Instance

    lm = DnaMaskedLM(pretrained=masked_models["char"], device="cpu")
    requests = [
        Instance("loglikelihood", {}, ("", choice), idx, metadata=("some_task", 0, 1))
        for idx, choice in enumerate(["ACGT", "AC", "GGGT"])
    ]
    with pytest.raises(UnsupportedTaskError, match="scores pairs of equal-length sequences"):
        lm.loglikelihood(requests)


def test_a_real_third_party_masked_architecture_gpn(pair_data, tmp_path):
    check(gpn_model(tmp_path / "gpn"), pair_data, {}, plugin="gpn")


@pytest.mark.slow
def test_two_cpu_processes_under_torchrun_match_one_process(masked_models, pair_data, tmp_path):
    run = two_processes_match_one(masked_models["bpe"], pair_data, tmp_path, "dna-mlm")
    assert "dna-mlm: data parallel, process 1 of 2" in run.stderr


def test_a_rerun_at_another_max_length_is_not_served_the_first_runs_scores(
    masked_models, pair_data, tmp_path
):
    """One ``--use_cache`` file, max_length 40 then 16: the second run's scores are its own
    (``check`` compares each with the reference at that max_length)."""
    cache = str(tmp_path / "cache")
    _, first = check(masked_models["char"], pair_data, {}, max_length=40, use_cache=cache)
    _, second = check(masked_models["char"], pair_data, {}, max_length=16, use_cache=cache)
    assert first != second


def reference_pll(model, tokenizer, sequence: str, max_length: int, prefix: str = "") -> float:
    """sum over the sequence's tokens i (not special, not the prefix's) of log P(token_i | the
    tokens with i masked), one forward pass per token, in the window of max_length tokens
    centred on i when longer."""
    encoding = tokenizer(
        prefix + sequence, return_special_tokens_mask=True, return_offsets_mapping=True
    )
    ids, specials = encoding["input_ids"], encoding["special_tokens_mask"]
    scored = [
        i
        for i, (start, _) in enumerate(encoding["offset_mapping"])
        if not specials[i] and start >= len(prefix)
    ]
    total = 0.0
    for i in scored:
        start = (
            min(max(0, i - max_length // 2), len(ids) - max_length) if len(ids) > max_length else 0
        )
        window = ids[start : start + max_length]
        window[i - start] = tokenizer.mask_token_id
        total += log_probs(model, window)[i - start, ids[i]].item()
    return total


def gpn_model(folder, legacy: bool = False):
    """A tiny GPN (``legacy``: the ConvNet class of songlab/gpn-brassicales)."""
    import gpn  # in the test extra
    from gpn.model import ConvNetConfig, ConvNetForMaskedLM, GPNConfig, GPNForMaskedLM

    gpn.register_auto_classes()
    tokenizer = as_masked_lm_tokenizer(build_tokenizer("char"))
    config = (
        ConvNetConfig(vocab_size=len(tokenizer), hidden_size=32, n_layers=2)
        if legacy
        else GPNConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            embedding="embedding",
            encoder="convnet",
        )
    )
    torch.manual_seed(0)
    (ConvNetForMaskedLM if legacy else GPNForMaskedLM)(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def pll_data(tmp_path_factory):
    """3 pairs of 60 bp: a pseudo-log-likelihood runs a forward pass per position, so its
    checks take short windows (still longer than ``max_length`` 40, so windows slide)."""
    from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet

    root = tmp_path_factory.mktemp("pll")
    write_parquet(random_pairs(3, 60, seed=5), root, "syn_human")
    return root


@pytest.mark.parametrize(
    "kind, metadata, trim, max_length",
    [
        ("char", {}, 1, None),
        ("kmer6", {"preset": "nucleotide_transformer"}, 6, None),
        ("char", {}, 1, 40),
        ("gpn", {}, 1, None),
        ("char", {"dna_prefix": "ACGT"}, 1, None),
    ],
)
def test_pll_equals_an_independent_per_position_computation(
    masked_models, pll_data, tmp_path, kind, metadata, trim, max_length
):
    path = gpn_model(tmp_path / "gpn") if kind == "gpn" else masked_models[kind]
    extra = {"plugin": "gpn"} if kind == "gpn" else {}
    if max_length:
        extra["max_length"] = max_length
    result = evaluate(
        path,
        [TASK],
        {"data_dir": str(pll_data), **metadata},
        model="dna-mlm",
        scoring="pll",
        **extra,
    )
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    limit = max_length or model.config.max_position_embeddings
    rows = pq.read_table(pll_data / "syn_human").to_pylist()
    got = logged_pairs(result, TASK)
    assert len(got) == len(rows)
    for pair, row in zip(got, rows, strict=True):
        o, p = (s[: len(s) - len(s) % trim] for s in (row["original_sequence"], row["sequence"]))
        prefix = metadata.get("dna_prefix", "")
        expected = tuple(reference_pll(model, tokenizer, s, limit, prefix) for s in (o, p))
        assert pair == pytest.approx(expected, abs=TOLERANCE)


def test_mostly_masked_pairs_name_the_pll_in_a_warning(masked_models, tmp_path, caplog):
    """A shuffled element that fills most of its window: the masked-marginal score conditions on
    little, and the warning says so and names scoring=pll; fewer differing positions: silent."""
    import random

    from perturbation_bench.fixtures.random_pairs import write_parquet

    rng = random.Random(3)
    rows = []
    for changed in (50, 20):  # of 60 bases
        original = "".join(rng.choice("ACGT") for _ in range(60))
        perturbed = "".join(
            {"A": "C", "C": "G", "G": "T", "T": "A"}[b] if 5 <= i < 5 + changed else b
            for i, b in enumerate(original)
        )
        rows.append({"original_sequence": original, "sequence": perturbed})
    write_parquet(rows[:1], tmp_path / "most", "syn_human")
    write_parquet(rows[1:], tmp_path / "some", "syn_human")
    for folder, warned in (("most", True), ("some", False)):
        caplog.clear()
        with caplog.at_level("WARNING"):
            evaluate(
                masked_models["char"], [TASK], {"data_dir": str(tmp_path / folder)}, model="dna-mlm"
            )
        found = (
            "in 1 of 1 pairs the differing positions are more than half the tokens" in caplog.text
        )
        assert found == warned and ("scoring=pll" in caplog.text) == warned


def test_an_unknown_scoring_is_refused(masked_models):
    from perturbation_bench.errors import OptionsError

    with pytest.raises(
        OptionsError,
        match="dna-mlm scores with scoring= marginal or pll or embedding, not 'pseudo'$",
    ):
        DnaMaskedLM(pretrained=masked_models["char"], scoring="pseudo", device="cpu")


@pytest.mark.parametrize("batch_size, level", [(1, "WARNING"), (4, "INFO")])
def test_pll_says_how_many_forward_passes_it_will_run_before_it_runs_them(
    masked_models, pll_data, caplog, monkeypatch, batch_size, level
):
    """The hint's numbers are the passes the model then makes (counted by a forward hook) and
    the masked inputs (one per distinct masked token); at batch size 1 it is a warning."""
    import re

    import torch.nn

    calls = []
    original = torch.nn.Module.__call__

    def counting(module, *args, **kwargs):
        if type(module).__name__ == "BertModel":  # the encoder: once a pass, head split or not
            calls.append(kwargs["input_ids"].shape[0])
        return original(module, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "__call__", counting)
    with caplog.at_level("INFO"):
        evaluate(
            masked_models["char"],
            [TASK],
            {"data_dir": str(pll_data)},
            model="dna-mlm",
            scoring="pll",
            batch_size=batch_size,
        )
    (record,) = [r for r in caplog.records if "scoring=pll masks each token" in r.getMessage()]
    inputs, passes = map(
        int, re.search(r"(\d+) masked inputs, (\d+) forward", record.getMessage()).groups()
    )
    assert record.levelname == level
    assert (inputs, passes) == (sum(calls), len(calls))
    assert max(calls) <= batch_size


@pytest.mark.parametrize("kind", ["bert", "nucleotide_transformer", "gpn", "gpn_convnet"])
def test_the_mlm_head_runs_at_the_read_positions_only_and_gives_the_full_logits(
    masked_models, tmp_path, kind
):
    """BERT, NT-style ESM and GPN (and its legacy ConvNet) split their head off: the logits read
    through it at chosen positions equal the full forward pass's at those positions (fp32, 1e-5
    absolute), and the head sees exactly those positions."""
    from replicas import save_nucleotide_transformer

    from perturbation_bench.models.masked_head import ReadLogits

    path = {
        "bert": lambda: masked_models["char"],
        "nucleotide_transformer": lambda: save_nucleotide_transformer(tmp_path / "nt"),
        "gpn": lambda: gpn_model(tmp_path / "gpn"),
        "gpn_convnet": lambda: gpn_model(tmp_path / "convnet", legacy=True),
    }[kind]()
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    read = ReadLogits(model)
    assert read.split
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(5, model.config.vocab_size, (3, 24), generator=generator)
    ids[:, [4, 11]] = AutoTokenizer.from_pretrained(path).mask_token_id
    rows, positions = torch.tensor([0, 0, 1, 2, 2]), torch.tensor([4, 11, 4, 0, 23])
    seen = []
    read.head.register_forward_hook(lambda module, args, out: seen.append(args[0].shape[:-1]))
    with torch.no_grad():
        got = read(ids, rows, positions)
        full = model(input_ids=ids).logits[rows, positions]
    assert seen[0] == (5,) and seen[-1] == (3, 24)  # the split read, then the full pass
    assert torch.allclose(got, full, atol=1e-5, rtol=0)


def test_a_masked_lm_whose_head_is_not_known_to_split_reads_the_full_logits():
    """A class outside masked_head.SPLIT_HEADS (a subclass whose forward may differ, as remote
    code's) keeps the full forward pass."""
    from transformers import BertConfig, BertForMaskedLM

    from perturbation_bench.models.masked_head import ReadLogits

    class OwnForward(BertForMaskedLM):
        def forward(self, **kwargs):
            output = super().forward(**kwargs)
            output.logits = output.logits * 2
            return output

    torch.manual_seed(0)
    model = OwnForward(
        BertConfig(
            vocab_size=12,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
        )
    ).eval()
    read = ReadLogits(model)
    ids = torch.randint(0, 12, (2, 6))
    rows, positions = torch.tensor([0, 1]), torch.tensor([2, 5])
    with torch.no_grad():
        assert not read.split
        assert torch.equal(read(ids, rows, positions), model(input_ids=ids).logits[rows, positions])
