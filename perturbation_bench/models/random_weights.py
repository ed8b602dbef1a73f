"""A random-weights floor: the checkpoint's architecture and tokenizer with weights drawn afresh.

``random_init=true`` (``dna-hf``, ``dna-mlm``) reads the checkpoint's ``config.json`` and its
tokenizer, never a weight file: the model is built by ``Auto*.from_config(config)`` on the CPU,
in float32, with the CPU random generator seeded by ``torch.manual_seed(seed)`` (``seed``,
default :data:`DEFAULT_SEED`, dnallm's), then cast to the run's dtype and moved to its device.
The generator's state is restored afterwards (``torch.random.fork_rng``), so nothing else in the
process draws differently. One seed gives the same weights in every run, on every device; two
seeds give two models. What such a run scores is what the tokenization and the architecture
alone give, the floor the report reads a trained model against (``report/floors.py``).

The run records ``random_init: true`` and its ``seed`` in its scorer settings
(``provenance.py``), which name the run in a report and key its answers under ``--use_cache``
(``result_store.py``): a random run is never served a trained run's answers. A trained run
records neither. Options that load or change checkpoint weights (``peft``, ``delta``,
``gguf_file``, GPTQ, model parallelism) are refused beside it, as ``seed`` is without it.
"""

from __future__ import annotations

from perturbation_bench.arguments import truth, truth_word
from perturbation_bench.errors import OptionsError

DEFAULT_SEED = 42
"""The seed of ``random_init=true`` without ``seed`` (dnallm's ``random_init_seed`` default)."""
WEIGHT_OPTIONS = ("peft", "delta", "gguf_file", "autogptq", "gptqmodel", "parallelize", "tp_plan")
"""``dna-hf`` arguments that read or place checkpoint weights: refused with ``random_init``."""


def random_seed(random_init, seed, others: dict | None = None) -> int | None:
    """The seed of a random-weights run, or None for a run of the checkpoint's weights;
    ``others``: the run's other model arguments, checked against :data:`WEIGHT_OPTIONS`.

    Raises:
        OptionsError: ``random_init`` is not true/false; ``seed`` is given without it or is not
            a whole number >= 0; a weight option is given with it.
    """
    if not truth(random_init, "random_init"):
        if seed is not None:
            raise OptionsError(
                f"seed={seed} draws random weights, which only random_init=true does; "
                "add random_init=true or leave seed out"
            )
        return None
    for name in WEIGHT_OPTIONS:
        value = (others or {}).get(name)
        if value not in (None, "") and truth_word(value) is not False:
            raise OptionsError(
                f"random_init=true draws fresh weights; {name}={value} loads or places "
                "checkpoint weights: leave one of them out"
            )
    if seed is None:
        return DEFAULT_SEED
    text = str(seed).strip()
    if isinstance(seed, bool) or not text.isdigit():
        raise OptionsError(f"seed must be a whole number >= 0, got {seed!r}")
    return int(text)


def settings(seed: int | None) -> dict:
    """What a run records of its weights in its scorer settings (module docstring)."""
    return {} if seed is None else {"random_init": True, "seed": seed}


def from_config(auto_class, config, seed: int, dtype=None, trust_remote_code: bool = False):
    """``auto_class.from_config(config)`` with weights drawn under ``seed`` on the CPU in
    float32, cast to ``dtype`` (a torch dtype; ``"auto"`` or None: the config's own dtype, else
    float32), in eval mode; the CPU generator's state is left as it was."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = auto_class.from_config(
            config, trust_remote_code=trust_remote_code, dtype=torch.float32
        )
    if not isinstance(dtype, torch.dtype):
        saved = getattr(config, "dtype", None)
        dtype = getattr(torch, saved) if isinstance(saved, str) else saved or torch.float32
    return model.to(dtype).eval()


class RandomWeightsHF:
    """For a class derived from lm-eval's ``HFLM``: its ``_create_model`` builds the model from
    the config HFLM read when ``self._random_seed`` is not None (:func:`random_seed`), and loads
    the checkpoint's weights as HFLM does otherwise."""

    _random_seed: int | None = None

    def _create_model(self, pretrained, *args, dtype="auto", trust_remote_code=False, **kwargs):
        if self._random_seed is None:
            return super()._create_model(
                pretrained, *args, dtype=dtype, trust_remote_code=trust_remote_code, **kwargs
            )
        from lm_eval.models.huggingface import get_dtype  # where HFLM reads it, any 0.4.x

        self._model = from_config(
            self.AUTO_MODEL_CLASS,
            self.config,
            self._random_seed,
            get_dtype(dtype),
            truth(trust_remote_code or False, "trust_remote_code"),
        ).to(self.device)
