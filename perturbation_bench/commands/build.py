"""``perturbation-bench build KIND``: datasets from a genome and an annotation or a variant file.

- ``syn``, ``motif``: the benchmark's pairs (``dataset/build.py``; settings and their rules in
  ``dataset/settings.py``);
- ``variants``: reference/alternate windows of a variant file (``variants/build.py``);
- ``mutations``: a variant table of mutations by consequence class (``variants/mutations.py``);
- ``saturation``: every base of regions to each other base (``variants/saturation.py``);
- ``calibration``: neutral sites to their alternates with their context cells
  (``variants/calibration_sites.py``);
- ``controls``: elements against shuffles of themselves (``controls/build.py``);
- ``footprints``: motifs inserted into backgrounds against permuted inserts
  (``kinds/footprints/builder.py``);
- ``recall``: a genome segment after an earlier copy of it against a control piece, at each
  distance (``kinds/recall/builder.py``).

Each kind's options are declared beside its builder, and its build (checking the arguments,
calling the builder, printing what it wrote) is its own module in ``builds/``, each importing
nothing heavy until it runs (``KINDS``), so the parser is built without reading pyarrow or a
model. A kind that writes pairs (``pairs/kinds.BUILT_BY``) also gets the built config's own task
YAML beside the data (``tasks/task_yaml.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.commands.builds import calibration as build_calibration
from perturbation_bench.commands.builds import controls as build_controls
from perturbation_bench.commands.builds import mutations as build_mutations
from perturbation_bench.commands.builds import pairs as build_pairs
from perturbation_bench.commands.builds import saturation as build_saturation
from perturbation_bench.commands.builds import variants as build_variants
from perturbation_bench.controls import elements
from perturbation_bench.dataset import settings as pair_settings
from perturbation_bench.kinds.footprints import builder as footprints
from perturbation_bench.kinds.footprints import command as build_footprints
from perturbation_bench.kinds.recall import builder as recall
from perturbation_bench.kinds.recall import command as build_recall
from perturbation_bench.variants import calibration_sites, mutations, saturation, windows

KINDS = {
    "syn": (pair_settings, build_pairs, "synonymous recoding to the most frequent codons"),
    "motif": (pair_settings, build_pairs, "an in-frame repeat (default CAG x 10)"),
    "variants": (windows, build_variants, "reference/alternate windows of a variant file"),
    "mutations": (mutations, build_mutations, "a variant table of mutations by consequence class"),
    "saturation": (saturation, build_saturation, "every base of regions to each other base"),
    "calibration": (
        calibration_sites,
        build_calibration,
        "neutral sites to their alternates, each with its context cell",
    ),
    "controls": (elements, build_controls, "elements against shuffles of themselves"),
    "footprints": (footprints, build_footprints, "motifs in backgrounds against permuted inserts"),
    "recall": (recall, build_recall, "a segment after its earlier copy against a control piece"),
}
"""Kind -> the module beside its builder that declares its options (``add_arguments``), the
module of its build (``builds/<kind>.py``, ``run``) and its help."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``build`` subcommand's kinds; each kind's options are its builder's (``KINDS``)."""
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for kind, (options, _, summary) in KINDS.items():
        options.add_arguments(kinds.add_parser(kind, help=summary))


def run(args: argparse.Namespace) -> int:
    """Build the chosen kind (``builds/<kind>.py`` prints what was written and excluded); for a
    kind that writes pairs, write the built config's own task YAML on its kind's template
    (``tasks/task_yaml.py``, ``pairs/kinds.py``) and say how to run it; return the exit status."""
    from perturbation_bench.pairs.kinds import BUILT_BY
    from perturbation_bench.tasks.task_yaml import write_task_yaml

    config = KINDS[args.kind][1].run(args)
    if config is not None:
        path = write_task_yaml(Path(args.out), config, BUILT_BY[args.kind])
        print(f"task {path.stem}: lm_eval --include_path {path.parent} --tasks {path.stem} ...")
    return 0
