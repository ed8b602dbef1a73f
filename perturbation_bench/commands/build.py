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
nothing heavy until it runs (``BUILDS``), so the parser is built without reading pyarrow or a
model. A build that writes pairs (:attr:`Build.writes`, a kind of ``pairs/kinds.py``) also gets
the built config's own task YAML beside the data (``tasks/task_yaml.py``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

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


@dataclass(frozen=True)
class Build:
    """One ``perturbation-bench build`` kind: the module beside its builder that declares its
    options (``add_arguments``), the module of its build (``builds/<kind>.py``, ``run``), its
    help, and the pair kind (``pairs/kinds.py``) of the files it writes (None: a variant table,
    not pairs)."""

    options: ModuleType
    build: ModuleType
    help: str
    writes: str | None


# fmt: off
BUILDS = {
    "syn": Build(pair_settings, build_pairs, "synonymous recoding to the most frequent codons",
                 "syn"),
    "motif": Build(pair_settings, build_pairs, "an in-frame repeat (default CAG x 10)", "motif"),
    "variants": Build(windows, build_variants, "reference/alternate windows of a variant file",
                      "variants"),
    "mutations": Build(mutations, build_mutations,
                       "a variant table of mutations by consequence class", None),
    "saturation": Build(saturation, build_saturation, "every base of regions to each other base",
                        None),
    "calibration": Build(calibration_sites, build_calibration,
                         "neutral sites to their alternates, each with its context cell",
                         "variants"),
    "controls": Build(elements, build_controls, "elements against shuffles of themselves",
                      "controls"),
    "footprints": Build(footprints, build_footprints,
                        "motifs in backgrounds against permuted inserts", "footprints"),
    "recall": Build(recall, build_recall,
                    "a segment after its earlier copy against a control piece", "recall"),
}
# fmt: on
"""The build kinds, by name."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``build`` subcommand's kinds; each kind's options are its builder's (``BUILDS``)."""
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for name, build in BUILDS.items():
        build.options.add_arguments(kinds.add_parser(name, help=build.help))


def run(args: argparse.Namespace) -> int:
    """Build the chosen kind (``builds/<kind>.py`` prints what was written and excluded); for a
    kind that writes pairs, write the built config's own task YAML on its kind's template
    (``tasks/task_yaml.py``, ``pairs/kinds.py``) and say how to run it; return the exit status."""
    from perturbation_bench.pairs.kinds import KIND
    from perturbation_bench.tasks.task_yaml import write_task_yaml

    build = BUILDS[args.kind]
    config = build.build.run(args)
    if config is not None:
        path = write_task_yaml(Path(args.out), config, KIND[build.writes])
        print(f"task {path.stem}: lm_eval --include_path {path.parent} --tasks {path.stem} ...")
    return 0
