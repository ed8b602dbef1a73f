"""One scoring method measured in a process of its own, the instrument every benchmark of
``bench/`` shares: what it scored, how long it took and its peak memory.

Methods (:func:`measure`):

- ``naive``: a standalone scorer's loop, one sequence at a time with transformers:
  ``LL = sum_t log_softmax(logits.float())[t]`` over the sequence's tokens, after the DNA prefix
  (or BOS where there is none);
- ``hf``: lm-eval's HFLM with ``softmax_dtype=float32`` (batched, length-sorted);
- ``dna-hf``, ``dna-mlm``: this package's causal and masked-LM models.

Each scores the first ``pairs`` pairs of a task (default ``perturbation_custom``, which reads any
config of a ``data_dir``); the clock runs from reading the pairs to the last score, model loading
excluded. Peak memory is ``torch.cuda.max_memory_allocated`` on a GPU, the process's peak
resident set on a CPU (imports included), hence :func:`in_fresh_process`.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import resource
import time
from dataclasses import dataclass

TASK = "perturbation_custom"  # reads any config of a data_dir


@dataclass
class Measurement:
    """What one method produced: LL pairs in document order, seconds of the whole evaluation,
    peak bytes, (naive only, which tokenizes every sequence itself) the number of tokens
    scored, and (lm-eval models) the seconds spent in the model's ``loglikelihood``."""

    method: str
    lls: list[tuple[float, float]]
    seconds: float
    peak_bytes: int
    scored_tokens: int | None = None
    scoring_bytes: int = 0  # how far scoring raised the peak above its level before scoring
    model_seconds: float | None = None
    passes: list[tuple[int, int]] | None = None  # (rows, width) of each decoder pass (dna-hf)
    measured: dict | None = None  # what the model chose by measurement (share_prefix=auto)


TOLERANCE = (1e-6, 1e-3)
"""Two ways of scoring the same pairs agree when every LL is within 1e-6 |LL| + 1e-3 nats."""


def in_fresh_process(function, *args):
    """``function(*args)`` in a new (spawned) process, so that its peak memory is its own."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def compare_lls(first: Measurement, second: Measurement) -> tuple[float, bool]:
    """The largest |LL difference| between two measurements of the same pairs, and whether
    every LL agrees within :data:`TOLERANCE`."""
    relative, absolute = TOLERANCE
    pairs = [
        (x, y)
        for p, q in zip(first.lls, second.lls, strict=True)
        for x, y in zip(p, q, strict=True)
    ]
    largest = max((abs(x - y) for x, y in pairs), default=0.0)
    return largest, all(abs(x - y) <= relative * abs(y) + absolute for x, y in pairs)


def measure(
    method: str,
    model: str,
    metadata: dict,
    pairs: int,
    device: str,
    dtype: str,
    batch_size: str,
    model_args: dict | None = None,
    task: str | None = None,
) -> Measurement:
    """Run one method in this process (called in a fresh child process by :func:`run`);
    ``model_args`` go to the lm-eval model (e.g. ``share_prefix``); ``task``: default the
    custom task."""
    import torch

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    tokens, before = None, {"model_seconds": None, "passes": None, "measured": None}
    if method == "naive":
        lls, seconds, tokens = _score_naive(model, metadata, pairs, device, dtype)
    else:
        lls, seconds = _score_lm_eval(
            method,
            model,
            metadata,
            pairs,
            device,
            dtype,
            batch_size,
            model_args or {},
            before,
            task or TASK,
        )
    peak = peak_bytes(device)
    scoring = peak - before.get("peak", peak)
    return Measurement(
        method,
        lls,
        seconds,
        peak,
        tokens,
        scoring,
        before["model_seconds"],
        before["passes"],
        before["measured"],
    )


def peak_bytes(device: str) -> int:
    """Peak memory so far: GPU memory allocated, or the process's resident set."""
    import torch

    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _score_naive(model_path: str, metadata: dict, pairs: int, device: str, dtype: str):
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForCausalLM

    from perturbation_bench.tasks.loading import load_pairs

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=getattr(torch, dtype)).to(device)
    model.eval()
    encode = encoder(model_path)
    start = time.perf_counter()
    docs = list(itertools.islice(load_pairs(**metadata)["test"], pairs))
    lls, tokens = [], 0
    for doc in tqdm(docs, desc="naive: scoring pairs"):
        pair = []
        for context, continuation in encode(doc):
            ids = torch.tensor([context + continuation], device=device)
            with torch.no_grad():
                log_probs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
            per_token = log_probs.gather(1, ids[0, 1:, None])[len(context) - 1 :, 0]
            pair.append(per_token.sum().item())
            tokens += len(continuation)
        lls.append(tuple(pair))
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return lls, time.perf_counter() - start, tokens


def _score_lm_eval(
    method: str,
    model_path: str,
    metadata: dict,
    pairs: int,
    device: str,
    dtype: str,
    batch_size: str,
    model_args: dict,
    before: dict,
    task: str = TASK,
):
    """Score with an lm-eval model; ``before["peak"]`` is the peak memory just before scoring,
    ``before["model_seconds"]`` the time spent in the model's ``loglikelihood``, ``passes``
    and ``measured`` what :func:`counting_passes` saw."""
    from lm_eval import simple_evaluate

    from perturbation_bench.tasks.pairing import logged_pairs

    lm, manager = lm_eval_model(method, model_path, device, dtype, batch_size, metadata, model_args)
    scoring = lm.loglikelihood
    before["model_seconds"] = 0.0

    def timed(requests, *args, **kwargs):  # this instance's method only
        start = time.perf_counter()
        try:
            return scoring(requests, *args, **kwargs)
        finally:
            before["model_seconds"] += time.perf_counter() - start

    lm.loglikelihood = timed
    before["peak"] = peak_bytes(device)
    start = time.perf_counter()
    with counting_passes(lm) as seen:
        result = simple_evaluate(
            model=lm, tasks=[task], task_manager=manager, log_samples=True, limit=pairs
        )
    seconds = time.perf_counter() - start
    before["passes"], before["measured"] = seen["passes"], seen["measured"]
    return logged_pairs(result, task), seconds


def passes_line(label: str, passes: list | None, measured: dict | None) -> str:
    """``passes LABEL: N decoder passes (B of batch 1, T padded tokens); auto chose WAY (shared
    S s, plain P s)`` for a row that counted its passes (:func:`counting_passes`)."""
    if passes is None:
        return f"passes {label}: not counted"
    line = (
        f"passes {label}: {len(passes)} decoder passes ({sum(r == 1 for r, _ in passes)} of "
        f"batch 1, {sum(r * w for r, w in passes):,} padded tokens)"
    )
    if measured is None:
        return line
    if measured.get("chosen") is None:
        return f"{line}; auto: nothing timed, the plan decided"
    seconds = measured["seconds"]
    return (
        f"{line}; auto chose {measured['chosen']} (shared {seconds['shared']:.3f} s, plain "
        f"{seconds['plain']:.3f} s on the first shared batch)"
    )


@contextlib.contextmanager
def counting_passes(lm):
    """``{"passes": [(rows, width), ...], "measured": ...}``, filled while the block runs: the
    shape of every forward pass of ``lm``'s model (a hook on its input embedding) and, at the
    end, what a ``dna-hf`` model chose by measurement (``share_prefix=auto``)."""
    seen = {"passes": [], "measured": None}
    embedding = lm.model.get_input_embeddings()
    hook = embedding.register_forward_hook(
        lambda module, args, output: seen["passes"].append(tuple(args[0].shape[:2]))
    )
    try:
        yield seen
    finally:
        hook.remove()
        sharing = getattr(lm, "_sharing", None)
        seen["measured"] = sharing.record().get("share_prefix") if sharing else None


def lm_eval_model(method, model_path, device, dtype, batch_size, metadata, model_args):
    """``(lm, task manager)``: lm-eval's ``hf`` (float32 log-softmax), ``dna-hf`` or ``dna-mlm``
    loaded with ``model_args``, and a task manager of this package's tasks alone."""
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from perturbation_bench.models.dna_hf import DnaHFLM
    from perturbation_bench.models.dna_mlm import DnaMaskedLM
    from perturbation_bench.paths import tasks_dir

    model_class, extra = {
        "hf": (HFLM, {"softmax_dtype": "float32"}),
        "dna-hf": (DnaHFLM, {}),
        "dna-mlm": (DnaMaskedLM, {}),
    }[method]
    lm = model_class(
        pretrained=model_path,
        device=device,
        dtype=dtype,
        batch_size=batch_size,
        **extra,
        **model_args,
    )
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    return lm, manager


def encoder(model_path: str):
    """doc -> [(context_ids, continuation_ids)] for both sequences, as the standalone scorer builds them."""
    from transformers import AutoTokenizer

    from perturbation_bench.tasks.document_requests import doc_to_context, doc_to_sequences

    tokenizer = AutoTokenizer.from_pretrained(model_path)

    def encode(doc):
        prefix = doc_to_context(doc)
        context = (
            tokenizer(prefix, add_special_tokens=False)["input_ids"]
            if prefix
            else [tokenizer.bos_token_id]
        )
        return [
            (context, tokenizer(s, add_special_tokens=False)["input_ids"])
            for s in doc_to_sequences(doc)
        ]

    return encode
