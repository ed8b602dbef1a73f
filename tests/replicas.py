"""Replicas of the model families users load, with random weights: each has the family's
architecture class and a tokenizer built the way the family's is, so the scoring path a real
checkpoint takes runs here without the hub.

- DNABERT: ``BertForMaskedLM`` and a ``BertTokenizerFast`` over a vocabulary of overlapping
  k-mers (``[PAD] [UNK] [CLS] [SEP] [MASK]`` then every k-mer), case kept;
- Nucleotide Transformer: ``EsmForMaskedLM`` and an ``EsmTokenizer`` over NT's layout (the
  specials, the 4,096 6-mers, then ``A T C G N``), which splits a raw string greedily;
- Mistral-DNA: ``MistralForCausalLM`` with a BPE tokenizer;
- HyenaDNA-style character tokenizer: one token per base, a separator appended;
- a model folder that ships its own code (``auto_map``), causal and masked.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

from perturbation_bench.fixtures.random_models import save_random_llama

SEED = 0


def kmers(k: int, alphabet: str = "ACGT") -> list[str]:
    return ["".join(p) for p in itertools.product(alphabet, repeat=k)]


def save_dnabert(folder: Path, k: int, max_positions: int = 512) -> Path:
    """DNABERT-k: BertForMaskedLM with a BertTokenizerFast of k-mer words."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *kmers(k)]
    tokenizer = BertTokenizerFast(
        vocab={word: i for i, word in enumerate(words)},
        do_lower_case=False,
        model_max_length=max_positions,
    )
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=max_positions,
        initializer_range=0.5,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(SEED)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def save_nucleotide_transformer(folder: Path, max_positions: int = 512) -> Path:
    """Nucleotide Transformer: EsmForMaskedLM and an EsmTokenizer over NT's vocabulary layout."""
    import torch
    from transformers import EsmConfig, EsmForMaskedLM, EsmTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    specials = ["<unk>", "<pad>", "<mask>", "<cls>", "<eos>", "<bos>"]
    (folder / "vocab.txt").write_text("\n".join([*specials, *kmers(6, "ATCG"), *"ATCGN"]) + "\n")
    tokenizer = EsmTokenizer(str(folder / "vocab.txt"), model_max_length=max_positions)
    config = EsmConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=max_positions + 2,
        initializer_range=0.5,
        pad_token_id=tokenizer.pad_token_id,
        mask_token_id=tokenizer.mask_token_id,
        position_embedding_type="rotary",
        token_dropout=False,
    )
    torch.manual_seed(SEED)
    EsmForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def save_mistral(folder: Path, tokenizer) -> Path:
    """Mistral-DNA: MistralForCausalLM with ``tokenizer`` (a BPE one)."""
    import torch
    from transformers import MistralConfig, MistralForCausalLM

    config = MistralConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        initializer_range=0.5,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(SEED)
    MistralForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def with_trailing_separator(tokenizer):
    """``tokenizer`` made to append its ``</s>`` to every input, as HyenaDNA's character
    tokenizer appends ``[SEP]``."""
    from tokenizers import processors

    tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", tokenizer.eos_token_id)]
    )
    return tokenizer


REMOTE_CONFIG = """from transformers import {base}Config


class TinyDnaConfig({base}Config):
    model_type = "tinydna-{kind}"
"""
REMOTE_MODEL = """from transformers import {model_class}

from .configuration_tinydna import TinyDnaConfig


class TinyDnaModel({model_class}):
    config_class = TinyDnaConfig
"""


def save_remote_code(folder: Path, tokenizer, kind: str) -> Path:
    """A model folder with its own code (``auto_map``), as HyenaDNA, Caduceus, DNABERT-2 and
    GENA-LM ship: a Llama (``kind="causal"``) or BERT (``"masked"``) subclass under a model type
    transformers does not know, loadable only with ``trust_remote_code=True``."""
    import json

    from perturbation_bench.fixtures.random_models import save_random_bert

    base, model_class, auto = {
        "causal": ("Llama", "LlamaForCausalLM", "AutoModelForCausalLM"),
        "masked": ("Bert", "BertForMaskedLM", "AutoModelForMaskedLM"),
    }[kind]
    plain = folder.with_name(folder.name + "-plain")
    (save_random_llama if kind == "causal" else save_random_bert)(plain, tokenizer)
    shutil.copytree(plain, folder)
    (folder / "configuration_tinydna.py").write_text(REMOTE_CONFIG.format(base=base, kind=kind))
    (folder / "modeling_tinydna.py").write_text(REMOTE_MODEL.format(model_class=model_class))
    config = json.loads((folder / "config.json").read_text())
    config.update(
        model_type=f"tinydna-{kind}",
        architectures=["TinyDnaModel"],
        auto_map={
            "AutoConfig": "configuration_tinydna.TinyDnaConfig",
            auto: "modeling_tinydna.TinyDnaModel",
        },
    )
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder
