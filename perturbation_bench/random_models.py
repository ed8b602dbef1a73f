"""Random tiny DNA models, for trying the pipeline offline and for timing it.

The README's quick start saves one with :func:`save_random_llama` (causal) or
:func:`save_random_bert` (masked, with a tokenizer from :func:`as_masked_lm_tokenizer`) and runs
the tasks on it; the
throughput benchmark and the tests build theirs the same way, since no checkpoint can be
downloaded there. The weights are random: use them to see the pipeline work, measure speed and
check exactness, never to judge a model.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<oov>", "<dna>", "<mask>"]


def single_nucleotide_tokenizer():
    """A fast tokenizer with one token per base (A, C, G, T, N) plus the special tokens."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    vocab = SPECIAL_TOKENS + list("ACGTN")
    core = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token="<oov>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return wrap_tokenizer(core)


def kmer_tokenizer(k: int = 6):
    """A fast tokenizer reading non-overlapping k-mers (4^k tokens) plus the special tokens; a
    trailing partial k-mer is the unknown token, as in GENERator-style tokenizers."""
    import itertools

    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    vocab = SPECIAL_TOKENS + ["".join(kmer) for kmer in itertools.product("ACGT", repeat=k)]
    core = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token="<oov>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(f".{{1,{k}}}"), behavior="isolated")
    return wrap_tokenizer(core)


def wrap_tokenizer(core):
    """Register the special tokens on a ``tokenizers.Tokenizer`` and wrap it for transformers."""
    from transformers import PreTrainedTokenizerFast

    core.add_special_tokens(SPECIAL_TOKENS)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<oov>",
        pad_token="<pad>",
        mask_token="<mask>",
    )


def as_masked_lm_tokenizer(tokenizer):
    """``tokenizer`` made to frame every input as ``<s> ... </s>``, as BERT-style masked LMs'
    tokenizers add ``[CLS] ... [SEP]``."""
    from tokenizers import processors

    tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        special_tokens=[("<s>", tokenizer.bos_token_id), ("</s>", tokenizer.eos_token_id)],
    )
    return tokenizer


def save_random_bert(
    folder: Path,
    tokenizer,
    layers: int = 2,
    hidden: int = 32,
    max_positions: int = 512,
    seed: int = 0,
    initializer_range: float = 0.5,
) -> Path:
    """Save a randomly initialised BERT masked LM (and ``tokenizer``) to ``folder``; return it.

    ``max_positions`` counts the framing special tokens too.
    """
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(
        vocab_size=len(tokenizer),
        **_sizes(tokenizer, layers, hidden, max_positions, initializer_range),
    )
    return _save(BertForMaskedLM, config, tokenizer, folder, seed)


def save_random_llama(
    folder: Path,
    tokenizer,
    layers: int = 2,
    hidden: int = 32,
    max_positions: int = 512,
    seed: int = 0,
    initializer_range: float = 0.5,
    vocab_size: int | None = None,
) -> Path:
    """Save a randomly initialised Llama (and ``tokenizer``) to ``folder``; return the folder.

    ``initializer_range`` is large on purpose: near-uniform predictions would make every pair's
    margin tiny. ``vocab_size`` larger than the tokenizer's gives the output layer of a model
    with a large (e.g. text) vocabulary, for memory measurements.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=max(vocab_size or 0, len(tokenizer)),
        num_key_value_heads=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **_sizes(tokenizer, layers, hidden, max_positions, initializer_range),
    )
    return _save(LlamaForCausalLM, config, tokenizer, folder, seed)


def _sizes(tokenizer, layers, hidden, max_positions, initializer_range) -> dict:
    """The configuration both random architectures share."""
    return {
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "max_position_embeddings": max_positions,
        "pad_token_id": tokenizer.pad_token_id,
        "initializer_range": initializer_range,
    }


def _save(model_class, config, tokenizer, folder: Path, seed: int) -> Path:
    """Initialise ``model_class(config)`` from ``seed`` and save it with ``tokenizer``."""
    import torch

    torch.manual_seed(seed)
    model_class(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return Path(folder)
