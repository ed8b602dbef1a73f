"""The scale benchmark's instrument (``scale.py`` states the stages): one measured run in this
process, lm-eval's functions wrapped to time each stage and read the peak resident set at its
end; ``python -m perturbation_bench.bench.stage_clock SPEC`` runs it (one process per rank under
``torchrun``) and writes ``<out>.rank<r>.json``.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from perturbation_bench.bench.measuring import TASK

CONFIG = "scale"
"""The config the scale benchmark writes its random pairs as."""
STAGES = ("start-up", "task", "read", "requests", "scoring", "wait", "results", "env", "write")
MEMORY_STAGES = ("read", "task", "requests", "scoring", "results", "write")


def _peak_bytes() -> int:
    """The peak resident set of this process since it started (Linux: VmHWM, which, unlike
    ``ru_maxrss``, does not carry over the peak of the process that started it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _Marks:
    """Time and peak RSS at named moments."""

    def __init__(self) -> None:
        self.time, self.peak, self.spent = {}, {}, {}

    def mark(self, name: str) -> None:
        self.time[name], self.peak[name] = time.perf_counter(), _peak_bytes()

    def timed(self, function, name: str):
        """``function`` wrapped to add the seconds of every call to ``self.spent[name]``."""

        def wrapped(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - start

        return wrapped

    def around(self, function, before: str, after: str):
        """``function`` wrapped to mark ``before`` (first call) and ``after`` (last return)."""

        def wrapped(*args, **kwargs):
            self.time.get(before) or self.mark(before)
            result = function(*args, **kwargs)
            self.mark(after)
            return result

        return wrapped


def measure(spec: dict) -> None:
    """The measured run (module docstring), in this process; writes ``<out>.rank<r>.json``."""
    marks = _Marks()
    marks.mark("start")
    import lm_eval.api.task
    import torch  # noqa: F401  (lm-eval imports it to seed; start-up)
    from lm_eval import evaluator
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    import perturbation_bench.models  # noqa: F401  (registers the models)
    from perturbation_bench.paths import tasks_dir

    lm = get_model("kmer-markov")(fasta=spec["fasta"], order=spec["order"])
    metadata = {"config": CONFIG, "data_dir": spec["data_dir"]}
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    task_class = lm_eval.api.task.ConfigurableTask
    task_class.download = marks.around(task_class.download, "read start", "read end")
    task_class.build_all_requests = marks.around(
        task_class.build_all_requests, "requests start", "requests end"
    )
    lm.loglikelihood = marks.around(lm.loglikelihood, "scoring start", "scoring end")
    evaluator.add_env_info = marks.around(evaluator.add_env_info, "env start", "env end")
    for collective in ("gather_object", "barrier"):  # waiting for the other processes
        setattr(lm, collective, marks.timed(getattr(lm, collective), "wait"))
    marks.mark("evaluate")
    results = evaluator.simple_evaluate(
        model=lm,
        tasks=[TASK],
        task_manager=manager,
        log_samples=spec["log_samples"],
    )
    marks.mark("results end")
    if results is not None and spec["log_samples"]:
        _write(results, spec["output_path"])
    marks.mark("write end")
    t = marks.time
    t.setdefault("env start", t["results end"])  # lm-eval describes the environment on rank 0
    t.setdefault("env end", t["results end"])
    seconds = {
        "start-up": t["evaluate"] - t["start"],
        "task": (t["read start"] - t["evaluate"]) + (t["requests start"] - t["read end"]),
        "read": t["read end"] - t["read start"],
        "requests": t["scoring start"] - t["requests start"],
        "scoring": t["scoring end"] - t["scoring start"],
        "results": t["results end"]
        - t["scoring end"]
        - (t["env end"] - t["env start"])
        - marks.spent.get("wait", 0.0),
        "wait": marks.spent.get("wait", 0.0),
        "env": t["env end"] - t["env start"],
        "write": t["write end"] - t["results end"],
    }
    ends = {
        "read": "read end",
        "task": "requests start",
        "requests": "scoring start",
        "scoring": "scoring end",
        "results": "results end",
        "write": "write end",
    }
    peaks = {stage: marks.peak[end] - marks.peak["evaluate"] for stage, end in ends.items()}
    out = Path(f"{spec['out']}.rank{lm.rank}.json")
    out.write_text(json.dumps({"rank": lm.rank, "seconds": seconds, "peaks": peaks}))


def _write(results: dict, output_path: str) -> None:
    """lm-eval's results and samples files, as its command line writes them."""
    from lm_eval.loggers import EvaluationTracker

    tracker = EvaluationTracker(output_path=output_path)
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])


if __name__ == "__main__":
    measure(json.loads(sys.argv[1]))
