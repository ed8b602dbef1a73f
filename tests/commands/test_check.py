"""``perturbation-bench check`` (``commands/check.py``): task options, data and tokenizers checked
in one line, with any weight loading made to fail (a dry run reads no weights)."""

from __future__ import annotations

import json
import re

import pytest

from perturbation_bench.cli import main
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet


@pytest.fixture(autouse=True)
def _weights_never_read(no_weights_read):
    """Every check here runs with weight loading refused (conftest.py)."""


def check(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["check", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_check_reads_every_task_and_tokenizes_a_sample(tiny_models, pair_data, capsys):
    status, out, _ = check(
        capsys,
        "--tasks",
        "perturbation_bench,hellaswag",
        "--metadata",
        json.dumps({"data_dir": str(pair_data)}),
        "--model_args",
        f"pretrained={tiny_models['char']},dtype=float32",
    )
    assert status == 0
    assert "hellaswag: not a perturbation-bench task; not checked" in out
    assert "perturbation_syn_human: 8 pairs, options and files OK; 124-124 tokens" in out
    assert "perturbation_motif_human: 6 pairs, options and files OK; 102-102 tokens" in out


@pytest.mark.parametrize(
    "metadata, message",
    [
        (
            {"data_dir": "DATA", "presets": "carbon"},
            "unknown option 'presets' .did you mean 'preset'",
        ),
        ({"data_dir": "DATA", "preset": "evo"}, "unknown preset 'evo'"),
        ({"data_dir": "/no/such/dir"}, "data_dir '/no/such/dir' has no folder 'syn_human'"),
        ({"data_dir": "DATA/syn_human"}, "a config folder: pass its parent"),
    ],
)
def test_check_reports_bad_options_and_data_in_one_line(pair_data, capsys, metadata, message):
    metadata = {k: v.replace("DATA", str(pair_data)) for k, v in metadata.items()}
    status, _, err = check(
        capsys, "--tasks", "perturbation_syn_human", "--metadata", json.dumps(metadata)
    )
    assert status == 2
    (line,) = [line for line in err.splitlines() if line.startswith("perturbation-bench error")]
    assert re.search(message, line), line


def test_check_reports_a_bad_pair_file(tmp_path, capsys):
    rows = random_pairs(3, 60, seed=1)
    rows[1]["sequence"] = rows[1]["sequence"][:-1]
    write_parquet(rows, tmp_path, "syn_human")
    status, _, err = check(
        capsys,
        "--tasks",
        "perturbation_syn_human",
        "--metadata",
        json.dumps({"data_dir": str(tmp_path)}),
    )
    assert status == 2 and "row 1" in err and "length" in err


def test_check_refuses_a_tokenizer_that_does_not_fit(tiny_models, pair_data, capsys):
    """124 bp pairs under a 6-mer tokenizer without trimming: the 4-base tail is unknown."""
    status, _, err = check(
        capsys,
        "--tasks",
        "perturbation_syn_human",
        "--metadata",
        json.dumps({"data_dir": str(pair_data)}),
        "--model_args",
        f"pretrained={tiny_models['kmer6']}",
    )
    assert status == 2 and "has only A/C/G/T bases" in err and "preset 'default'" in err


def test_a_run_with_none_of_our_tasks_is_refused(pair_data, capsys):
    """A misspelt task name leaves nothing to check: exit 2 naming the tasks, not 0."""
    status, out, err = check(
        capsys,
        "--tasks",
        "perturbation_syn_humna",
        "--metadata",
        json.dumps({"data_dir": str(pair_data)}),
    )
    assert status == 2
    assert (
        "perturbation_syn_humna: not a perturbation-bench task (did you mean "
        "'perturbation_syn_human'?); not checked"
    ) in out
    assert "none of ['perturbation_syn_humna'] is a perturbation-bench task" in err


def test_a_hub_loading_failure_is_one_line_naming_the_model(pair_data, capsys, monkeypatch):
    """The hub on but unreachable (transformers raises OSError): one line naming the hub id and
    the failure, not a run that goes on as though no tokenizer had been given."""
    import huggingface_hub.constants
    import transformers

    def unreachable(name, **_):
        raise OSError(
            f"We couldn't connect to 'https://huggingface.co' to load the files of {name}."
        )

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", unreachable)
    status, out, err = check(
        capsys,
        "--tasks",
        "perturbation_syn_human",
        "--metadata",
        json.dumps({"data_dir": str(pair_data)}),
        "--model_args",
        "pretrained=someone/dna-model",
    )
    assert status == 2 and "no tokenizer given" not in out
    (line,) = [line for line in err.splitlines() if line.startswith("perturbation-bench error")]
    assert "pretrained=someone/dna-model" in line and "We couldn't connect" in line


def test_check_counts_the_pairs_holding_n_in_the_whole_task_not_only_its_sample(
    tiny_models, capsys
):
    """The demo motif config's 9th pair holds N; the default sample tokenizes the first 8."""
    status, out, _ = check(
        capsys,
        "--tasks",
        "perturbation_motif_human",
        "--model_args",
        f"pretrained={tiny_models['kmer6']}",
        "--metadata",
        json.dumps({"data_dir": "demo", "kmer_size": 6}),
    )
    assert status == 0
    assert (
        "0 unknown tokens from non-ACGT k-mers in those pairs; 1 of 24 pairs holds a base "
        "other than A/C/G/T"
    ) in out


def test_a_base_other_than_acgt_counts_in_either_sequence_of_a_pair():
    from perturbation_bench.commands.check import _holds_other_bases
    from perturbation_bench.pairs.fields import CHANGE, ORIGINAL

    assert not _holds_other_bases({ORIGINAL: "ACGTacgt", CHANGE: "GG"})
    assert _holds_other_bases({ORIGINAL: "ACGTNcgt", CHANGE: "GG"})
    assert _holds_other_bases({ORIGINAL: "ACGTacgt", CHANGE: "GN"})


@pytest.fixture(scope="module")
def masked_char_model(tmp_path_factory):
    """A masked LM over single nucleotides, and DNABERT-3 (a tokenizer of k-mer words)."""
    from replicas import save_dnabert

    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    root = tmp_path_factory.mktemp("masked-check")
    char = save_random_bert(root / "char", as_masked_lm_tokenizer(build_tokenizer("char")))
    return str(char), str(save_dnabert(root / "dnabert3", 3))


def test_overlapping_kmers_for_a_tokenizer_without_kmer_words_are_refused(
    masked_char_model, pair_data, capsys
):
    """The dnabert preset gives the model space-separated k-mer words; a single-nucleotide
    tokenizer reads the spaces as tokens. check and the run both stop; DNABERT's passes."""
    char, dnabert = masked_char_model
    metadata = json.dumps({"data_dir": str(pair_data), "preset": "dnabert", "kmer_size": 3})
    arguments = ["--model", "dna-mlm", "--tasks", "perturbation_syn_human", "--metadata", metadata]
    status, _, err = check(capsys, *arguments, "--model_args", f"pretrained={char}")
    assert status == 2
    assert "this tokenizer reads the three words 'ACG CGT GTA' as" in err
    assert "Leave kmer_overlap and the dnabert preset out" in err
    status, out, _ = check(capsys, *arguments, "--model_args", f"pretrained={dnabert}")
    assert status == 0 and "0 unknown tokens" in out


@pytest.mark.parametrize(
    "model, metadata, message",
    [
        ("dna-hf", {"convention": "gpn"}, "convention 'gpn' scores with dna-mlm, not dna-hf"),
        ("hf", {"convention": "gpn"}, "convention 'gpn' scores with dna-mlm, not lm-eval's own model"),
        ("hf", {"start_token": "none"}, "start_token 'none' needs one of this package's models"),
        ("dna-mlm", {"convention": "evo2"}, "convention 'evo2' scores with dna-hf or kmer-markov, not dna-mlm"),
        ("kmer-markov", {"preset": "dnabert"}, "kmer-markov reads bases, not overlapping k-mers"),
    ],
)  # fmt: skip
def test_check_refuses_settings_that_do_not_apply_to_the_model(
    tiny_models, masked_char_model, pair_data, capsys, model, metadata, message
):
    path = masked_char_model[0] if model == "dna-mlm" else tiny_models["char"]
    model_args = "fasta=g.fa" if model == "kmer-markov" else f"pretrained={path}"
    status, _, err = check(
        capsys,
        *("--model", model, "--tasks", "perturbation_syn_human", "--model_args", model_args),
        *("--metadata", json.dumps({"data_dir": str(pair_data), **metadata})),
    )
    assert status == 2 and message in err, err


def test_check_passes_the_evo2_convention_for_kmer_markov_with_no_tokenizer(pair_data, capsys):
    status, out, _ = check(
        capsys,
        *("--model", "kmer-markov", "--tasks", "perturbation_syn_human"),
        *("--model_args", "fasta=genome.fa,order=2"),
        *("--metadata", json.dumps({"data_dir": str(pair_data), "convention": "evo2"})),
    )
    assert status == 0 and "kmer-markov reads bases, no tokenizer" in out


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ("{data_dir: x}", "--metadata is not JSON (Expecting property name"),
        ('["data_dir"]', """--metadata must be a JSON object, got '["data_dir"]'"""),
    ],
)
def test_metadata_that_is_not_a_json_object_is_refused_first(capsys, metadata, message):
    status, out, err = check(capsys, "--tasks", "perturbation_bench", "--metadata", metadata)
    assert status == 2
    assert message in err
    assert out == ""


@pytest.mark.parametrize(
    "model, arguments, message",
    [
        ("dna-hf", "seed=3", "seed=3 draws random weights, which only random_init=true does"),
        ("dna-mlm", "random_init=true,seed=-2", "seed"),
        ("dna-hf", "random_init=true,gguf_file=x", "gguf_file=x loads or places checkpoint"),
        ("dna-hf", "share_prefix=maybe", "share_prefix must be auto, true or false, got 'maybe'"),
    ],
)
def test_check_refuses_the_weight_and_sharing_arguments_the_model_refuses(
    tiny_models, pair_data, capsys, model, arguments, message
):
    status, _, err = check(
        capsys,
        "--model",
        model,
        "--tasks",
        "perturbation_syn_human",
        "--metadata",
        json.dumps({"data_dir": str(pair_data)}),
        "--model_args",
        f"pretrained={tiny_models['char']},{arguments}",
    )
    assert status == 2 and message in err and "\n" not in err.strip()
