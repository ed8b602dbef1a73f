"""``perturbation-bench check``: a dry run of an ``lm_eval`` command line, in seconds, no weights.

lm-eval loads the model before it builds the tasks, so a misspelt option or a bad data file shows
up only after the weights are read. ``check`` takes the same ``--model``, ``--tasks``,
``--metadata``, ``--model_args`` (and ``--batch_size``, ``--include_path``) and, without loading
any weight, runs the checks the run makes, with the same code:

1. checks the model arguments: each one the model takes (``models/model_arguments.py``),
   ``pretrained``/``tokenizer`` a folder or a usable hub id, the batch size (``arguments.py``),
   the checkpoint's architecture against the model (a masked LM is not given to ``dna-hf``,
   ``models/architecture.py``) and an embedding score's ``layer`` against the layers the
   model's config declares (both read from ``config.json``, without the weights,
   ``models/embedding_scoring.check_layer``);
2. builds every perturbation-bench task among ``--tasks`` with lm-eval's own ``TaskManager``, for
   the model (``active_models.as_scoring``), which reads and checks every pair file and every
   task option, and refuses settings that do not apply to the model (``tasks/loading.py``,
   ``pairs/conventions.check_model``) and an option that no task of the run takes
   (``pairs/applicability.py``); other tasks are named and not checked;
3. tokenizes the first ``--sample`` pairs of each task with the model's tokenizer, as the model
   will (unknown tokens, overlapping k-mers: ``models/tokens.py``), and prints the range of
   tokens per sequence and the unknown tokens in those pairs, and how many pairs of the whole
   task hold a base other than A/C/G/T (``N``), which a k-mer tokenizer reads as unknown tokens.
   A model that reads bases (``kmer-markov``) has no tokenizer to check. For ``dna-hf``, a task
   whose requests are contexts of a continuation (recall) has its longest request held to the
   model's ``max_length``, which it never crops.

Exit status 0 when all is well, 2 with one line on the first problem.
"""

from __future__ import annotations

import itertools
import json
import re

from perturbation_bench.errors import OptionsError
from perturbation_bench.families import reads_bases
from perturbation_bench.wording import agree, counted, did_you_mean

DEFAULT_SAMPLE = 8
HF_MODELS = ("hf", "hf-auto", "huggingface")
"""lm-eval's own names of its transformers model, which scores causal LMs."""
_NOT_ACGT = re.compile("[^ACGTacgt]")


def add_arguments(parser) -> None:
    """The ``check`` subcommand's arguments (the ``lm_eval`` ones it mirrors)."""
    parser.add_argument(
        "--model", default="hf", help="as lm_eval --model (default %(default)s, as lm_eval)"
    )
    parser.add_argument("--tasks", required=True, help="comma-separated task names, as lm_eval")
    parser.add_argument("--metadata", default="{}", help="JSON, as lm_eval --metadata")
    parser.add_argument("--model_args", default="", help="k=v,k=v, as lm_eval --model_args")
    parser.add_argument("--batch_size", default="1", help="as lm_eval --batch_size")
    parser.add_argument("--include_path", help="another task folder, as lm_eval --include_path")
    parser.add_argument(
        "--sample",
        type=int,
        default=DEFAULT_SAMPLE,
        help="pairs tokenized per task (default %(default)s)",
    )


def run(args) -> int:
    """Run the checks of the module docstring; print one line per task; return 0."""
    from lm_eval.utils import simple_parse_args_string

    from perturbation_bench.active_models import as_scoring
    from perturbation_bench.arguments import load_tokenizer
    from perturbation_bench.pairs.applicability import check_every_option_taken

    metadata = _metadata(args.metadata)
    model_args = simple_parse_args_string(args.model_args) if args.model_args else {}
    model = _check_model(args, model_args)
    tokenizer = None if reads_bases(model) else load_tokenizer(model_args)
    with as_scoring(model, model_args.get("scoring")):
        tasks = _build_tasks(args, model_args | metadata)
        check_every_option_taken()
    for name, task in tasks.items():
        docs = task.eval_docs
        sample = (
            f"{model} reads bases, no tokenizer"
            if reads_bases(model)
            else _sample(task, docs, tokenizer, args.sample)
        )
        if model == "dna-hf" and tokenizer is not None:
            _check_questions_fit(name, task, docs, tokenizer, model_args)
        other = sum(_holds_other_bases(doc) for doc in docs)
        print(
            f"{name}: {counted(len(docs), 'pair')}, options and files OK; {sample}; {other} of "
            f"{counted(len(docs), 'pair')} {agree(other, 'holds', 'hold')} a base other than "
            "A/C/G/T"
        )
    return 0


def _package_model(name: str, model_args: dict) -> str | None:
    """``name``, its arguments checked, if it is one of this package's models, else None (a
    model of lm-eval's own: the tasks load for it as for any of lm-eval's)."""
    from perturbation_bench.families import MODELS
    from perturbation_bench.models.model_arguments import check_model_arguments

    check_model_arguments(name, model_args)
    return name if name in MODELS else None


def _check_embedding_layer(model_args: dict) -> None:
    """``scoring=embedding``'s ``layer`` against the model's config (module docstring)."""
    if model_args.get("scoring") != "embedding" or "pretrained" not in model_args:
        return
    from perturbation_bench.models.architecture import checkpoint_config
    from perturbation_bench.models.embedding_scoring import EmbeddingScore, check_layer

    arguments = {name: model_args.get(name) for name in ("distance", "pooling", "layer")}
    score = EmbeddingScore.from_arguments("embedding", **arguments)
    if score.layer == "last":
        return
    check_layer(score, checkpoint_config(model_args))


def _metadata(text: str) -> dict:
    """``--metadata`` read as a JSON object."""
    try:
        metadata = json.loads(text)
    except json.JSONDecodeError as err:
        raise OptionsError(f"--metadata is not JSON ({err}): {text!r}") from None
    if not isinstance(metadata, dict):
        raise OptionsError(f"--metadata must be a JSON object, got {text!r}")
    return metadata


def _check_model(args, model_args: dict):
    """Step 1 of the module docstring, without loading a weight: the model's sources, its
    plugin, its checkpoint's architecture, the embedding layer and the batch size; return
    ``--model`` where it is one of this package's models, else None (:func:`_package_model`)."""
    from perturbation_bench.arguments import (
        check_batch_size,
        check_model_source,
        check_remote_code,
    )
    from perturbation_bench.models.architecture import check_checkpoint, register_plugin

    for argument in ("pretrained", "tokenizer"):
        if argument in model_args:
            check_model_source(model_args[argument], argument)
            check_remote_code(model_args[argument], model_args.get("trust_remote_code"))
    model = _package_model(args.model, model_args)
    if model_args.get("plugin"):
        register_plugin(model_args["plugin"])
    if args.model in HF_MODELS or (model is not None and not reads_bases(model)):
        check_checkpoint(model or args.model, model_args)
    _check_embedding_layer(model_args)
    check_batch_size(args.batch_size)
    return model


def _build_tasks(args, metadata: dict) -> dict:
    """``{name: task}`` for this package's tasks among ``args.tasks`` (groups expanded), built as
    lm_eval builds them."""
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    include = [str(tasks_dir())] + ([args.include_path] if args.include_path else [])
    manager = TaskManager(include_path=include, include_defaults=False, metadata=metadata)
    names = [name.strip() for name in args.tasks.split(",") if name.strip()]
    ours = [name for name in names if name in manager.all_tasks]
    _say_unchecked([name for name in names if name not in ours], manager.all_tasks)
    if not ours:
        raise OptionsError(f"none of {names} is a perturbation-bench task")
    return manager.load(ours)["tasks"]


def _say_unchecked(names: list[str], all_tasks) -> None:
    """Name each of ``names`` as not a perturbation-bench task, with the nearest one's name."""
    ours = [name for name in all_tasks if name.startswith("perturbation")]
    for name in names:
        print(f"{name}: not a perturbation-bench task{did_you_mean(name, ours)}; not checked")


def _sample(task, docs, tokenizer, size: int) -> str:
    """Tokenize the first ``size`` pairs as the model would; describe the token counts."""
    if tokenizer is None:
        return "no tokenizer given (pretrained= in --model_args), tokenization not checked"
    from perturbation_bench.models.tokens import formatting_setting, unknown_tokens

    counts, unknown = [], 0
    for doc in itertools.islice(docs, size):
        for context, sequence in _requests(task, doc):
            ids = tokenizer(context + sequence, add_special_tokens=False)["input_ids"]
            unknown += unknown_tokens(tokenizer, sequence, ids, formatting_setting(doc))
            counts.append(len(ids))
    return (
        f"{min(counts)}-{max(counts)} tokens per sequence in the first {len(counts) // 2} pairs, "
        f"{unknown} unknown tokens from non-ACGT k-mers in those pairs"
    )


def _requests(task, doc) -> list[tuple[str, str]]:
    """A document's ``(context, continuation)`` requests as lm-eval makes them: one context and
    its choices, or (a task of several inputs, lm-eval's ``multiple_input``: the recall kind)
    each choice as a context of the one target."""
    context = task.doc_to_text(doc)
    if isinstance(context, int):
        target = task.config.target_delimiter + task.doc_to_target(doc)
        return [(choice, target) for choice in task.doc_to_choice(doc)]
    return [(context, sequence) for sequence in task.doc_to_choice(doc)]


def _check_questions_fit(name: str, task, docs, tokenizer, model_args: dict) -> None:
    """A task whose requests are contexts of a continuation (the recall kind): its longest
    request against dna-hf's ``max_length`` (given, else lm-eval's reading of the config), which
    dna-hf refuses once its weights are read (``pairs/requests.refuse_cropped_context``).

    Raises:
        OptionsError: naming the task, the document, its tokens and the model's positions.
    """
    from lm_eval.models.utils import resolve_max_length

    from perturbation_bench.models.architecture import checkpoint_config

    asked = [
        (len(context) + len(target), number, context, target)
        for number, doc in enumerate(docs)
        if isinstance(task.doc_to_text(doc), int)
        for context, target in _requests(task, doc)
    ]
    if not asked:
        return
    _, number, context, target = max(asked, key=lambda request: request[:2])
    tokens = len(tokenizer(context + target, add_special_tokens=False)["input_ids"])
    limit = int(model_args.get("max_length") or 0) or resolve_max_length(
        checkpoint_config(model_args), tokenizer
    )
    if tokens > limit:
        raise OptionsError(
            f"{name} doc {number}: its context and continuation are {tokens} tokens, more than "
            f"dna-hf's max_length={limit}; a context that is part of the question is never "
            "cropped: rebuild without the distances past the model's positions"
        )


def _holds_other_bases(doc) -> bool:
    """Whether either sequence of a pair holds a letter other than A/C/G/T (either case): the
    original, or the perturbed copy's changed span (the rest of it is the original's)."""
    from perturbation_bench.pairs.fields import CHANGE, ORIGINAL

    return bool(_NOT_ACGT.search(doc[ORIGINAL]) or _NOT_ACGT.search(doc[CHANGE]))
