"""The footprint task's own settings (``pairs/setting_rows.py``), gathered into the settings
table (``pairs/settings.py``) through the kind's row of ``pairs/kinds.py``; every other task
holds None for them."""

from __future__ import annotations

from perturbation_bench.pairs.setting_rows import Setting

# fmt: off
SETTINGS = (
    Setting("ties", "strict", "the footprint task's per-motif accuracy: a tie counts as wrong "
            "(strict) or right (correct, DART-Eval's rule); None in other tasks' settings",
            choices=("strict", "correct")),
    Setting("dose_axes", None, "the footprint task's dose columns (copies, spacing) that take "
            "several values in its data; None for other tasks", type=(list, tuple), option=False,
            identifies=False, recorded=False),
)
# fmt: on
