"""Measure what the autoload hook costs a Python start that never imports lm-eval.

    python scripts/startup_cost.py [--starts 20]

Runs ``python -c pass`` in this environment ``--starts`` times with the hook on and as many times
with it off (``PERTURBATION_BENCH_NO_AUTOLOAD=1``: the .pth line still runs, imports nothing),
interleaved so that machine load hits both alike, and prints the median wall time of each and
the time ``python -X importtime`` attributes to the hook's own modules.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def start(env: dict) -> float:
    """Seconds for one ``python -c pass``."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - began


def hook_import_microseconds() -> int:
    """Cumulative import time of ``perturbation_bench`` modules at start-up (``-X importtime``)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True
    )
    total = 0
    for line in run.stderr.splitlines():
        if "perturbation_bench" in line and line.startswith("import time:"):
            total += int(line.split("|")[0].split(":")[1])  # self time, microseconds
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args()
    on = {k: v for k, v in os.environ.items() if k != "PERTURBATION_BENCH_NO_AUTOLOAD"}
    off = {**on, "PERTURBATION_BENCH_NO_AUTOLOAD": "1"}
    times = {"hook on": [], "hook off": []}
    for _ in range(args.starts):
        times["hook on"].append(start(on))
        times["hook off"].append(start(off))
    print("| python -c pass | median ms | min ms |")
    print("|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values) * 1e3:.1f} | {min(values) * 1e3:.1f} |")
    difference = statistics.median(times["hook on"]) - statistics.median(times["hook off"])
    print(f"\nmedian difference: {difference * 1e3:+.1f} ms over {args.starts} starts each")
    print(f"import time of perturbation_bench modules: {hook_import_microseconds()} us")


if __name__ == "__main__":
    main()
