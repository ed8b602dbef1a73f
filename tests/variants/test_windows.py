"""Variant windows at chromosome ends (``variants/windows.py``): each edge rule against the
upstream's own rule, computed independently from the genome on hidden variants, and the
warning when a convention's edge rule is not the data's (``tasks/variants.py``)."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from dna_fixtures import (
    evaluate,
    expected_edge_pair,
    random_genome,
    reverse_complement,
    upstream_ll,
)
from perturbation_bench.cli import main
from perturbation_bench.pairs.conventions import CONVENTIONS
from perturbation_bench.tasks.pairing import logged_pairs

TOLERANCE = 1e-4
"""nats: float32 model, float64 sums on both sides."""


VARIANT_TASK = "perturbation_variants"
VW = 64
"""Window of the convention checks: variants at both ends of a 400 bp chromosome reach past it."""


@pytest.fixture(scope="module")
def hidden_genome(tmp_path_factory):
    """Two random chromosomes and variants the package never saw built: SNVs in the middle and
    at both ends of each chromosome, an insertion and deletions (one near the start)."""
    root = tmp_path_factory.mktemp("hidden")
    fasta, sequences = random_genome(root, {"chr1": 400, "chr2": 300}, 29)
    other = lambda b: "ACGT"[("ACGT".index(b) + 1) % 4]  # noqa: E731
    variants = []
    for chrom, seq in sequences.items():
        for pos in (1, 3, 20, len(seq) // 2, len(seq) - 10, len(seq)):
            variants.append((chrom, pos, seq[pos - 1], other(seq[pos - 1])))
        variants.append((chrom, 150, seq[149], seq[149] + "GAT"))  # insertion
        variants.append((chrom, 100, seq[99:103], seq[99]))  # deletion
        variants.append((chrom, 4, seq[3:6], seq[3]))  # deletion near the start
    table = pd.DataFrame(variants, columns=["chrom", "pos", "ref", "alt"])
    table.to_csv(root / "v.tsv", sep="\t", index=False)
    return fasta, sequences, table


def built_variants(hidden_genome, root, edge: str) -> pd.DataFrame:
    fasta, _, _ = hidden_genome
    assert (
        main(
            [
                "build",
                "variants",
                "--variants",
                str(fasta.with_name("v.tsv")),
                "--fasta",
                str(fasta),
                "--config",
                "hidden",
                "--out",
                str(root),
                "--window",
                str(VW),
                "--edge",
                edge,
            ]
        )
        == 0
    )
    return pd.read_parquet(root / "hidden")


@pytest.mark.parametrize("name", ["traitgym", "evo2", "biofoundation"])
def test_causal_conventions_equal_their_upstream_rule_on_hidden_variants(
    tiny_models, hidden_genome, tmp_path, name
):
    """Each variant's windows cut again by the upstream's edge rule from the genome (not from
    the built rows), scored by the upstream's reduction and strands."""
    _, sequences, table = hidden_genome
    convention = CONVENTIONS[name]
    rows = built_variants(hidden_genome, tmp_path, convention.edge)
    path = tiny_models["char"]
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(
        path,
        [VARIANT_TASK],
        {"config": "hidden", "data_dir": str(tmp_path), "convention": name},
        model="dna-hf",
    )

    def score(sequence: str) -> float:
        strands = [sequence, reverse_complement(sequence)] if convention.rc_average else [sequence]
        lls = [upstream_ll(model, tokenizer, s) for s in strands]
        if convention.reduction == "mean":
            lls = [ll / (len(s) - 1) for ll, s in zip(lls, strands, strict=True)]
        return sum(lls) / len(lls)

    pairs = logged_pairs(result, VARIANT_TASK)
    assert len(pairs) == len(rows) == len(table)
    at_ends = 0
    for (ll_ref, ll_alt), row in zip(pairs, rows.to_dict("records"), strict=True):
        reference, alternate, _, _ = expected_edge_pair(
            sequences, row["chrom"], row["pos"], row["ref"], row["alt"], VW, convention.edge
        )
        assert ll_ref == pytest.approx(score(reference), abs=TOLERANCE), (row["chrom"], row["pos"])
        assert ll_alt == pytest.approx(score(alternate), abs=TOLERANCE), (row["chrom"], row["pos"])
        at_ends += bool(row["is_clamped"])
    assert at_ends >= 8


def test_the_gpn_convention_equals_gpns_masked_llr_on_padded_windows(hidden_genome, tmp_path):
    """GPN's run_vep, written out: the variant base masked in the N-padded window, LLR =
    log P(alt) - log P(ref) there, the reverse strand's at ``W - 1 - W // 2`` with complemented
    alleles, averaged; dna-mlm's margin LL(ref) - LL(alt) is minus that."""
    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    _, sequences, _ = hidden_genome
    rows = built_variants(hidden_genome, tmp_path / "data", "pad")
    snvs = rows[(rows["ref"].str.len() == 1) & (rows["alt"].str.len() == 1)]
    path = save_random_bert(tmp_path / "mlm", as_masked_lm_tokenizer(build_tokenizer("char")))
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(
        str(path),
        [VARIANT_TASK],
        {"config": "hidden", "data_dir": str(tmp_path / "data"), "convention": "gpn"},
        model="dna-mlm",
    )
    margins = {
        (r["chrom"], r["pos"], r["alt"]): a - b
        for (a, b), r in zip(
            logged_pairs(result, VARIANT_TASK), rows.to_dict("records"), strict=True
        )
    }

    def llr(window: str, index: int, ref: str, alt: str) -> float:
        masked = window[:index] + tokenizer.mask_token + window[index + 1 :]
        ids = tokenizer(masked, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            log_probs = torch.log_softmax(model(ids).logits[0, index + 1].float(), dim=-1)
        return (
            log_probs[tokenizer.convert_tokens_to_ids(alt)]
            - log_probs[tokenizer.convert_tokens_to_ids(ref)]
        ).item()

    complement = dict(zip("ACGT", "TGCA", strict=True))
    for row in snvs.to_dict("records"):
        window, _, _, index = expected_edge_pair(
            sequences, row["chrom"], row["pos"], row["ref"], row["alt"], VW, "pad"
        )
        forward = llr(window, index, row["ref"], row["alt"])
        reverse = llr(
            reverse_complement(window),
            VW - 1 - index,
            complement[row["ref"]],
            complement[row["alt"]],
        )
        got = margins[(row["chrom"], row["pos"], row["alt"])]
        assert got == pytest.approx(-(forward + reverse) / 2, abs=TOLERANCE), (
            row["chrom"],
            row["pos"],
        )
    assert len(snvs) >= 12 and snvs["is_clamped"].sum() >= 8


def test_a_convention_whose_edge_rule_differs_from_the_datas_says_so(
    hidden_genome, tmp_path, caplog, monkeypatch
):
    from perturbation_bench import active_models
    from perturbation_bench.tasks.variants import load_variant_pairs

    monkeypatch.setattr(active_models, "_scoring", ("dna-hf", None))
    built_variants(hidden_genome, tmp_path / "shift", "shift")
    load_variant_pairs(
        config="hidden", data_dir=str(tmp_path / "shift"), convention="biofoundation"
    )
    assert (
        "convention 'biofoundation' cuts windows at chromosome ends by 'pad', this data by "
        "'shift'; 12 of 18 variants lie at a chromosome end"
    ) in caplog.text
    caplog.clear()
    built_variants(hidden_genome, tmp_path / "pad", "pad")
    load_variant_pairs(config="hidden", data_dir=str(tmp_path / "pad"), convention="biofoundation")
    assert "cuts windows" not in caplog.text


def test_a_chromosome_shorter_than_the_window_is_excluded_only_when_shifting(tmp_path, capsys):
    """Shifting needs W real bases; padding reads N past the ends, truncation cuts there."""
    from perturbation_bench.variants.windows import _window_span

    (tmp_path / "g.fa").write_text(">short\nACGTACGTACGTACGTACGT\n")
    pd.DataFrame([("short", 10, "C", "G")], columns=["chrom", "pos", "ref", "alt"]).to_csv(
        tmp_path / "v.csv", index=False
    )
    lengths = {}
    for edge in ("shift", "pad", "truncate"):
        code = main(
            [
                "build",
                "variants",
                "--variants",
                str(tmp_path / "v.csv"),
                "--fasta",
                str(tmp_path / "g.fa"),
                "--config",
                edge,
                "--out",
                str(tmp_path / "out"),
                "--window",
                "32",
                "--edge",
                edge,
            ]
        )
        if edge == "shift":
            assert (
                code != 0
                and "(excluded: chromosome_shorter_than_window 1)" in capsys.readouterr().err
            )
            continue
        report = json.loads((tmp_path / "out" / edge / "_build_report.json").read_text())
        assert report["excluded"] == {} and report["settings"]["edge"] == edge
        lengths[edge] = len(pd.read_parquet(tmp_path / "out" / edge)["original_sequence"][0])
    assert lengths == {"pad": 32, "truncate": 20}
    with pytest.raises(ValueError, match="unknown edge rule 'mirror'; rules: shift, pad, truncate"):
        _window_span(0, 32, 100, "mirror")


@pytest.mark.parametrize("edge", ["shift", "pad", "truncate"])
def test_a_window_that_just_fits_at_either_end_is_not_clamped_and_one_more_base_is(tmp_path, edge):
    from perturbation_bench.formats.fasta import Genome
    from perturbation_bench.variants.windows import variant_windows

    sequence = "".join(random.Random(8).choice("ACGT") for _ in range(100))
    (tmp_path / "g.fa").write_text(f">c\n{sequence}\n")
    genome = Genome(tmp_path / "g.fa")

    def clamped(pos: int) -> bool:
        ref = sequence[pos - 1]
        windows = variant_windows(genome, "c", pos, ref, "A" if ref != "A" else "C", 20, edge)
        return windows.is_clamped

    # window [p - 10, p + 10): it fits exactly for p = 10 (starts at 0) and p = 90 (ends at 100)
    assert (clamped(11), clamped(91)) == (False, False)
    assert (clamped(10), clamped(92)) == (True, True)
