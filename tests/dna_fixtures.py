"""Test material built at test time: tiny DNA tokenizers and models, parquet files in the hub layout.

Nothing here touches the network. Every builder is seeded, so a test run is reproducible.
"""

from __future__ import annotations

import itertools
import os
import random
import sysconfig
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

requires_autoload = pytest.mark.skipif(
    not (Path(sysconfig.get_paths()["purelib"]) / "perturbation_bench_autoload.pth").is_file()
    and not os.environ.get("CI"),
    reason="the autoload .pth comes with a regular install (pip install .), not an editable one; "
    "CI always runs these",
)

SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<oov>", "<dna>"]
TOKENIZER_KINDS = ("char", "kmer6", "bpe")


def random_dna(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("ACGT") for _ in range(length))


def build_tokenizer(kind: str) -> PreTrainedTokenizerFast:
    """A DNA tokenizer: single nucleotides, non-overlapping 6-mers, or a small trained BPE."""
    if kind == "char":
        vocab = SPECIAL_TOKENS + list("ACGTN")
        core = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token="<oov>"))
        core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    elif kind == "kmer6":
        kmers = ["".join(k) for k in itertools.product("ACGT", repeat=6)]
        vocab = SPECIAL_TOKENS + kmers
        core = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token="<oov>"))
        core.pre_tokenizer = pre_tokenizers.Split(Regex(".{1,6}"), behavior="isolated")
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
    core.add_special_tokens(SPECIAL_TOKENS)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<oov>",
        pad_token="<pad>",
    )


def build_model(kind: str, folder: Path, max_positions: int = 512, seed: int = 0) -> Path:
    """Save a random 2-layer Llama with tokenizer ``kind`` to ``folder``; return the folder."""
    tokenizer = build_tokenizer(kind)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=0.5,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def make_pairs(n: int, length: int, seed: int = 0, patch: int = 12) -> list[dict]:
    """``n`` rows in the published schema's spirit: a random window and a copy with one patch rewritten."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        original = random_dna(rng, length)
        start = rng.randrange(0, length - patch)
        perturbed = original[:start] + random_dna(rng, patch) + original[start + patch :]
        rows.append(
            {
                "benchmark_id": f"pair_{seed}_{i}",
                "gene_name": f"GENE{i}",
                "strand": rng.choice("+-"),
                "original_sequence": original,
                "sequence": perturbed,
                "patch_start_in_seq": start,
            }
        )
    return rows


def write_parquet(rows: list[dict], data_dir: Path, config: str, name: str = "test-00000-of-00001.parquet") -> Path:
    """Write ``rows`` to ``data_dir/config/name`` (the hub layout); return the file."""
    path = Path(data_dir) / config / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def evaluate(model_path: str, tasks: list[str], metadata: dict, model: str = "hf", **model_args) -> dict:
    """Run tasks through lm-eval's Python API on the CPU with only this package's task folder indexed."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    return simple_evaluate(
        model=model,
        model_args={"pretrained": model_path, "dtype": "float32", **model_args},
        tasks=tasks,
        task_manager=manager,
        device="cpu",
        batch_size=4,
        log_samples=True,
    )


def pair_lls(result: dict, task: str) -> list[tuple[float, float]]:
    """(LL_original, LL_perturbed) per document, in document order, from logged samples."""
    samples = sorted(result["samples"][task], key=lambda s: s["doc_id"])
    return [tuple(s["filtered_resps"][0]) for s in samples]
