"""Data sources and input validation: every bad input stops with the file, the row and the reason."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perturbation_bench.errors import DataSourceError, DataValidationError, OptionsError
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.pairs.changes import perturbed_sequence
from perturbation_bench.tasks.document_requests import doc_to_context, doc_to_sequences
from perturbation_bench.tasks.loading import load_pairs
from perturbation_bench.tasks.options import PRESETS, parse_options


def rows_with(index: int, **changes) -> list[dict]:
    rows = random_pairs(5, 30, seed=4)
    rows[index] = {**rows[index], **changes}
    return rows


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            rows_with(3, sequence="ACGT"),
            r"row 3: original_sequence and sequence differ in length \(30 vs 4 bp\)",
        ),
        (rows_with(2, original_sequence=""), r"row 2: 'original_sequence' is empty"),
        (
            rows_with(1, sequence="ACGTACGTACGTACGTACGTACGTACGTAX"),
            r"row 1: 'sequence' has letters outside ACGTN \(first: 'X' at position 29\)",
        ),
        (rows_with(4, original_sequence=None), r"row 4: 'original_sequence' is null"),
        (
            [{**r, "sequence": 7} for r in random_pairs(2, 30)],
            r"row 0: column 'sequence' holds int64 values, expected strings",
        ),
        (
            [{k: v for k, v in r.items() if k != "sequence"} for r in random_pairs(2, 30)],
            r"missing column\(s\) sequence; found: ",
        ),
    ],
)
def test_bad_rows_are_reported_with_file_and_row(tmp_path, rows, message):
    path = write_parquet(rows, tmp_path, "syn_human")
    with pytest.raises(DataValidationError, match=message) as error:
        load_pairs("syn_human", data_dir=str(tmp_path))
    assert str(path) in str(error.value)


def test_every_bad_row_is_counted(tmp_path):
    rows = random_pairs(6, 30)
    for row in rows[2:]:
        row["sequence"] = row["sequence"][:-1]
    write_parquet(rows, tmp_path, "syn_human")
    with pytest.raises(DataValidationError, match="row 2: .*; 3 more row"):
        load_pairs("syn_human", data_dir=str(tmp_path))


def test_empty_and_unreadable_files(tmp_path):
    schema = pa.schema([("original_sequence", pa.string()), ("sequence", pa.string())])
    (tmp_path / "syn_human").mkdir()
    pq.write_table(schema.empty_table(), tmp_path / "syn_human" / "a.parquet")
    with pytest.raises(DataValidationError, match=r"a\.parquet: empty file \(0 rows\)"):
        load_pairs("syn_human", data_dir=str(tmp_path))
    (tmp_path / "syn_human" / "a.parquet").write_text("not parquet")
    with pytest.raises(DataValidationError, match=r"a\.parquet: not a readable parquet file"):
        load_pairs("syn_human", data_dir=str(tmp_path))


def test_lowercase_and_n_are_accepted_and_nothing_is_dropped(tmp_path):
    rows = random_pairs(7, 30)
    rows[0]["original_sequence"] = rows[0]["original_sequence"].lower()
    rows[1]["sequence"] = "N" * 30
    write_parquet(rows[:4], tmp_path, "syn_human", "test-0.parquet")
    write_parquet(rows[4:], tmp_path, "syn_human", "test-1.parquet")
    docs = load_pairs("syn_human", data_dir=str(tmp_path))["test"]
    assert [d["original_sequence"] for d in docs] == [r["original_sequence"] for r in rows]
    assert [perturbed_sequence(d) for d in docs] == [r["sequence"] for r in rows]


def test_missing_config_folder_names_the_expected_layout(tmp_path):
    write_parquet(random_pairs(2, 30), tmp_path, "syn_human")
    with pytest.raises(DataSourceError, match=r"has no folder 'syn_mouse'.*syn_mouse/\*\.parquet"):
        load_pairs("syn_mouse", data_dir=str(tmp_path))


def test_unreachable_hub_says_how_to_use_local_files():
    with pytest.raises(DataSourceError, match=r"data_dir.*syn_human/\*\.parquet") as error:
        load_pairs("syn_human")
    assert error.value.__cause__ is None and error.value.__suppress_context__


@pytest.mark.slow
def test_unreachable_hub_on_the_command_line_is_one_message_without_traceback():
    code = "from perturbation_bench.tasks.loading import load_pairs; load_pairs('syn_mouse')"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ
    )
    assert run.returncode == 1
    assert "perturbation-bench error: cannot load HuggingFaceBio/perturbation-bench" in run.stderr
    assert "Traceback" not in run.stderr


def test_hub_files_are_read_from_the_hugging_face_cache(monkeypatch, tmp_path):
    """The hub code path, offline: a snapshot laid out as huggingface_hub caches it."""
    cache = tmp_path / "hub"
    repo = cache / "datasets--HuggingFaceBio--perturbation-bench"
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    rows = random_pairs(3, 36, seed=9)
    write_parquet(rows, repo / "snapshots" / commit, "motif_human")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    docs = load_pairs("motif_human")["test"]
    assert [perturbed_sequence(d) for d in docs] == [r["sequence"] for r in rows]


@pytest.mark.parametrize(
    "preset, prefix, kept",
    [
        ("default", "", 34),
        ("carbon", "<dna>", 30),
        ("generator", "<s>", 30),
        ("nucleotide_transformer", "", 30),
    ],
)
def test_presets_format_context_and_trim(tmp_path, preset, prefix, kept):
    write_parquet(random_pairs(2, 34), tmp_path, "syn_human")  # 34: 6-mers keep 30, 3-mers 33
    doc = load_pairs("syn_human", data_dir=str(tmp_path), preset=preset)["test"][0]
    assert doc_to_context(doc) == prefix
    assert doc_to_sequences(doc) == [
        doc["original_sequence"][:kept],
        perturbed_sequence(doc)[:kept],
    ]
    assert sorted(PRESETS) == [
        "carbon",
        "default",
        "dnabert",
        "generator",
        "nucleotide_transformer",
    ]


def test_the_dnabert_preset_gives_overlapping_6mers_untrimmed(tmp_path):
    write_parquet(random_pairs(2, 34), tmp_path, "syn_human")
    doc = load_pairs("syn_human", data_dir=str(tmp_path), preset="dnabert")["test"][0]
    original = doc["original_sequence"]
    assert doc_to_context(doc) == ""
    assert doc_to_sequences(doc)[0].split() == [original[i : i + 6] for i in range(29)]


def test_lower_case_bases_are_scored_upper_cased_and_counted(tmp_path, caplog):
    rows = random_pairs(3, 30)
    rows[1]["sequence"] = rows[1]["sequence"][:10].lower() + rows[1]["sequence"][10:]
    write_parquet(rows, tmp_path, "syn_human")
    with caplog.at_level("INFO", logger="lm_eval.perturbation_bench.tasks.loading"):
        docs = load_pairs("syn_human", data_dir=str(tmp_path), preset="carbon")["test"]
    assert doc_to_sequences(docs[1])[1] == rows[1]["sequence"][:30].upper()
    assert perturbed_sequence(docs[1]) == rows[1]["sequence"]  # the published text, kept
    assert "1 of 3 pairs has lower-case (soft-masked) bases" in caplog.text


def test_dataset_revision_reaches_the_hub_call(monkeypatch, tmp_path):
    calls = []

    def fake_snapshot_download(repo_id, **kwargs):
        calls.append((repo_id, kwargs))
        write_parquet(random_pairs(2, 30), tmp_path, "syn_mouse")
        return str(tmp_path)

    monkeypatch.setattr("huggingface_hub.snapshot_download", fake_snapshot_download)
    load_pairs("syn_mouse", dataset_revision="v1.2")
    ((repo, kwargs),) = calls
    assert repo == "HuggingFaceBio/perturbation-bench"
    assert kwargs["revision"] == "v1.2" and kwargs["allow_patterns"] == ["syn_mouse/*.parquet"]


def test_a_misspelt_config_lists_the_folders_there(tmp_path):
    write_parquet(random_pairs(2, 30), tmp_path, "syn_zebrafish")
    write_parquet(random_pairs(2, 30), tmp_path, "motif_zebrafish")
    with pytest.raises(DataSourceError, match="configs there: motif_zebrafish, syn_zebrafish"):
        load_pairs(data_dir=str(tmp_path), config="syn_zebrafsh")


def test_single_options_override_the_preset():
    options = parse_options({"preset": "carbon", "kmer_size": 3, "pretrained": "some/model"})
    assert (options.settings.dna_prefix, options.settings.kmer_size) == ("<dna>", 3)


@pytest.mark.parametrize(
    "metadata, message",
    [
        (
            {"preset": "evo"},
            "unknown preset 'evo'; valid presets: default, carbon, generator, nucleotide_transformer, "
            "dnabert",
        ),
        (
            {"presets": "carbon"},
            "unknown option 'presets' .did you mean 'preset'.*data_dir, dataset_revision, config, preset, dna_prefix, kmer_size, kmer_overlap, rc_average, reduction",
        ),
        ({"data-dir": "x"}, "did you mean 'data_dir'"),
        ({"kmer_size": 0}, "kmer_size must be a positive integer"),
        ({"dna_prefix": 5}, "dna_prefix must be a string"),
        ({"reduction": "median"}, "reduction must be one of sum, mean, got 'median'"),
        ({"reduction": "mena"}, r"got 'mena' \(did you mean 'mean'\?\)$"),
        ({"reduction": "max"}, "got 'max'$"),
        ({"preset": "carbn"}, r"unknown preset 'carbn' \(did you mean 'carbon'\?\); valid presets"),
        ({"convention": "traitgm"}, r"unknown convention 'traitgm' \(did you mean 'traitgym'\?\);"),
    ],
)
def test_bad_options_list_the_valid_ones(metadata, message):
    with pytest.raises(OptionsError, match=message):
        parse_options(metadata)


def test_model_arguments_in_the_metadata_pass_through():
    model_args = {
        "pretrained": "x",
        "dtype": "bfloat16",
        "softmax_dtype": "float32",
        "max_length": 8192,
        "batch_size": 8,
        "trust_remote_code": True,
        "add_bos_token": False,
        "prefix_token_id": 1,
        "revision": "main",
        "attn_implementation": "sdpa",
        "parallelize": True,
        "version": 1.0,
        "config_source": "x.yaml",
        "device_map": "auto",
        "tokenizer": "y",
        "backend": "causal",
    }
    assert parse_options(model_args).settings.preset == "default"


def test_sequences_shorter_than_one_kmer_are_rejected(tmp_path):
    rows = random_pairs(3, 30)
    rows[1].update(original_sequence="ACG", sequence="ACT")
    path = write_parquet(rows, tmp_path, "syn_human")
    with pytest.raises(DataValidationError, match=f"{path}: row 1: .*shorter than one 6-mer"):
        load_pairs("syn_human", data_dir=str(tmp_path), preset="carbon")


def test_the_config_option_belongs_to_the_custom_task(tmp_path):
    write_parquet(random_pairs(2, 30), tmp_path, "syn_zebrafish")
    docs = load_pairs(data_dir=str(tmp_path), config="syn_zebrafish")["test"]
    assert len(docs) == 2
    with pytest.raises(
        OptionsError,
        match="perturbation_custom, perturbation_variants, perturbation_footprints and "
        "perturbation_recall need the config and its folder.*; configs in .*: syn_zebrafish$",
    ):
        load_pairs(data_dir=str(tmp_path))
    with pytest.raises(
        OptionsError,
        match=r"selects the data of perturbation_custom, perturbation_variants, perturbation_footprints and perturbation_recall only; the task of '\w+' reads its own \(lm-eval hands every task of a run the same options: run '\w+' apart, or as its built task perturbation_\w+ with --include_path",
    ):
        load_pairs("syn_human", data_dir=str(tmp_path), config="syn_zebrafish")


def test_the_data_identity_covers_every_file_of_a_config(tmp_path):
    """Two configs alike in their first file and different in their second are different data;
    the same bytes elsewhere are the same data."""
    from perturbation_bench.pairs.fields import TASK

    rows = random_pairs(6, 30, seed=8)
    for folder, second in (("a", rows[3:]), ("b", rows[3:5]), ("c", rows[3:])):
        write_parquet(rows[:3], tmp_path / folder, "syn_human", "part-0.parquet")
        write_parquet(second, tmp_path / folder, "syn_human", "part-1.parquet")

    def identity(folder):
        (doc, *_) = load_pairs("syn_human", data_dir=str(tmp_path / folder))["test"]
        return doc[TASK]["data"]

    assert identity("a") != identity("b")
    assert identity("a") == identity("c")


def test_an_option_of_another_task_kind_is_said_once_and_changes_nothing(
    tmp_path, caplog, monkeypatch
):
    """lm-eval hands every task of a run one metadata: ``ties`` (footprints) and ``min_per_class``
    (labelled variants) given to a paired task are logged once each, and the task is the same."""
    from perturbation_bench.active_models import as_scoring
    from perturbation_bench.pairs.fields import TASK

    write_parquet(random_pairs(3, 30), tmp_path, "syn_human")
    write_parquet(random_pairs(3, 30), tmp_path, "motif_human")
    plain = load_pairs("syn_human", data_dir=str(tmp_path))["test"][0][TASK]
    logger = "lm_eval.perturbation_bench.pairs.applicability"
    with caplog.at_level("WARNING", logger=logger), as_scoring(None):  # one run
        for config in ("syn_human", "motif_human"):
            docs = load_pairs(config, data_dir=str(tmp_path), ties="correct", min_per_class=5)
    warnings = sorted(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    assert len(warnings) == 2
    assert "the min_per_class option applies to perturbation_variants" in warnings[0]
    assert "the ties option applies to perturbation_footprints" in warnings[1]
    settings = load_pairs("syn_human", data_dir=str(tmp_path), ties="correct")["test"][0][TASK]
    assert (
        (settings.ties, settings.min_per_class)
        == (plain.ties, plain.min_per_class)
        == (
            None,
            None,
        )
    )
    assert len(docs["test"]) == 3


@pytest.mark.parametrize(
    "created, metadata, misplaced",
    [
        ("likelihood", {"scoring": "embedding", "distance": "cosine"}, "scoring=embedding, distance=cosine"),
        (None, {"pooling": "mean"}, "pooling=mean"),
        ("marginal", {"scoring": "pll"}, "scoring=pll"),
    ],
)  # fmt: skip
def test_a_model_argument_given_in_metadata_alone_is_refused(created, metadata, misplaced):
    """The model never sees --metadata: a scoring it was not created with is refused there, and
    agrees where lm-eval merged --model_args into the metadata."""
    from perturbation_bench.active_models import as_scoring
    from perturbation_bench.errors import OptionsError
    from perturbation_bench.tasks.options import parse_options

    with as_scoring("dna-hf", created), pytest.raises(OptionsError) as refused:
        parse_options(metadata)
    assert str(refused.value) == (
        f"{misplaced}: model arguments, read by the model only; give them in --model_args "
        f"(--metadata reaches the tasks; the model scores with scoring={created or 'its default'})"
    )
    with as_scoring("dna-hf", "embedding"):
        parse_options({"scoring": "embedding", "distance": "cosine", "pooling": "mean"})
