"""The kinds of pair files: one table that the schema, validation, the task loaders, the built
configs' task YAMLs and the report read.

Each :class:`Kind` of :data:`KINDS` declares:

    name           the kind, as ``dataset/validate.py``'s checks name it
    marker         a column only files of this kind have, which tells a file's kind
                   (:func:`kind_of`; a footprint file also has a ``motif`` column: where several
                   markers are present, the kind listed last wins)
    builds         the ``perturbation-bench build`` kinds that write its pair files
    template       the task YAML template a built config of this kind includes (its metrics)
    task           the package's task that reads any config of this kind (``config`` and
                   ``data_dir`` options)
    shape          what its documents hold and ask (``pairs/shape.py``: further sequences,
                   comparisons, the columns its task reads, the fields the report keeps per
                   sample, its row invariants), given here or named by dotted path in the
                   kind's folder (``paths.named``), so no module of this floor imports a kind's

and, read off the settings table (``pairs/settings.py``, whose rows name the kinds that take
them): ``settings``, the task settings its task fills in, None in every other task's settings,
and ``options``, those of them set by the user (lm-eval hands every task of a run the same
metadata: the others ignore them and say so once, ``pairs/applicability.py``).

A new kind is one row here, its builder (with its ``build`` kind), its template YAML and, where
its task does more than a pair's, its loader and metrics in ``tasks/`` and its report section
(``report/sections.py``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from perturbation_bench.pairs.settings import SETTING, SETTINGS
from perturbation_bench.pairs.shape import PAIR_SHAPE, Copy, DocumentShape
from perturbation_bench.paths import named

TEMPLATE = "_perturbation_template_yaml"
"""The template of the pair tasks: pairwise accuracy and its companions."""


@dataclass(frozen=True)
class Kind:
    """One kind of pair file (module docstring)."""

    name: str
    marker: str
    builds: tuple[str, ...]
    template: str = TEMPLATE
    task: str = "perturbation_custom"
    shape: DocumentShape | str = PAIR_SHAPE

    @property
    def document(self) -> DocumentShape:
        """Its :class:`~perturbation_bench.pairs.shape.DocumentShape`, imported if named."""
        return named(self.shape) if isinstance(self.shape, str) else self.shape

    def invariants(self) -> list:
        """Its row invariants (``dataset/invariants.Invariant``), none if it declares none."""
        return named(self.document.invariants)() if self.document.invariants else []

    @property
    def settings(self) -> tuple[str, ...]:
        """The settings whose row names this kind (module docstring)."""
        return tuple(setting.name for setting in SETTINGS if self.name in setting.kinds)

    @property
    def options(self) -> tuple[str, ...]:
        """Those of :attr:`settings` the user sets."""
        return tuple(name for name in self.settings if SETTING[name].option)


# fmt: off
KINDS = (
    Kind("syn", "n_codons_changed", ("syn",)),
    Kind("motif", "motif", ("motif",)),
    Kind("controls", "shuffle", ("controls",)),
    Kind("variants", "alt", ("variants", "calibration"), template="_perturbation_variants_template_yaml",
         task="perturbation_variants", shape=DocumentShape(
             columns=("chrom", "pos", "ref", "alt"),
             sample_fields=("label", "chrom", "pos", "ref", "alt", "region", "match_group", "assay",
                            "label_direction", "calibration_cell"), identity=("assay",))),
    Kind("footprints", "background_sequence", ("footprints",),
         template="_perturbation_footprints_template_yaml", task="perturbation_footprints",
         shape="perturbation_bench.kinds.footprints.shape:SHAPE"),
    Kind("recall", "context_repeat", ("recall",), template="_perturbation_recall_template_yaml",
         task="perturbation_recall", shape="perturbation_bench.kinds.recall.shape:SHAPE"),
)
# fmt: on
KIND = {kind.name: kind for kind in KINDS}
""":data:`KINDS` by name."""
BUILT_BY = {build: kind for kind in KINDS for build in kind.builds}
"""The kind of the pair files each ``perturbation-bench build`` kind writes (``mutations`` and
``saturation`` write variant tables, not pairs)."""
ONE_KIND_OPTIONS = {option: kind for kind in KINDS for option in kind.options}
"""The options that apply to one kind's task, with that kind."""


@functools.cache
def sample_fields() -> tuple[str, ...]:
    """The document fields the report keeps per sample, every kind's, each once."""
    return tuple(dict.fromkeys(n for kind in KINDS for n in kind.document.sample_fields))


@functools.cache
def margin_fields() -> tuple[str, ...]:
    """The sample fields of every kind's comparisons after the pair's, each once."""
    return tuple(dict.fromkeys(n for kind in KINDS for n in kind.document.margins))


@functools.cache
def copies() -> tuple[Copy, ...]:
    """Every kind's further sequence columns (``pairs/shape.Copy``)."""
    return tuple(dict.fromkeys(copy for kind in KINDS for copy in kind.document.copies))


def shape_of(doc: dict) -> DocumentShape:
    """The shape of a document's kind: the last kind whose marker the document holds (not
    None), or, for a kind with further sequences, their spans, which replace the marker column
    there (``tasks/documents.py``); the pair's for a document of no kind."""
    for kind in reversed(KINDS):
        held = [copy.change for copy in kind.document.copies] or [kind.marker]
        if all(doc.get(name) is not None for name in held):
            return kind.document
    return PAIR_SHAPE


def kind_of(columns) -> str | None:
    """The kind of a file with these column names (module docstring); None if it has no
    kind's marker."""
    names = set(columns)
    found = [kind.name for kind in KINDS if kind.marker in names]
    return found[-1] if found else None
