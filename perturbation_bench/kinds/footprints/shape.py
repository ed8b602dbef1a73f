"""What a footprint document holds and asks (``pairs/shape.py``): its raw background as a third
sequence, and three comparisons (DART-Eval's accuracy and accuracy vs background, ``rules.py``)::

    (o, p)    the motif window against its control        (the pair of every task)
    (o, r)    the motif window against the background     margin  LL(o) - LL(r): motif_margin
    (p, r)    the control window against the background   margin  LL(p) - LL(r): control_margin
"""

from __future__ import annotations

from perturbation_bench.kinds.footprints.rules import DOSE_AXES
from perturbation_bench.pairs.shape import (
    ORIGINAL_NAME,
    PAIR,
    PERTURBED_NAME,
    Comparison,
    Copy,
    DocumentShape,
)

BACKGROUND = Copy("background_sequence", "background")
"""A footprint pair file's third sequence column: the background the motif went into."""

SHAPE = DocumentShape(
    copies=(BACKGROUND,),
    comparisons=(
        PAIR,
        Comparison(ORIGINAL_NAME, BACKGROUND.name, margin="motif_margin"),
        Comparison(PERTURBED_NAME, BACKGROUND.name, margin="control_margin"),
    ),
    columns=(BACKGROUND.column, "motif", *DOSE_AXES),
    sample_fields=("motif", *DOSE_AXES, "orientation", "background_id"),
    invariants="perturbation_bench.kinds.footprints.invariants:invariants",
)
