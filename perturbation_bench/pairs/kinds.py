"""The kinds of pair files: one table that the schema, validation, the task loaders, the built
configs' task YAMLs and the report read.

Each :class:`Kind` of :data:`KINDS` declares:

    name           the kind, as ``dataset/validate.py``'s checks name it
    marker         a column only files of this kind have, which tells a file's kind
                   (:func:`kind_of`; a footprint file also has a ``motif`` column: where several
                   markers are present, the kind listed last wins)
    template       the task YAML template a built config of this kind includes (its metrics)
    task           the package's task that reads any config of this kind (``config`` and
                   ``data_dir`` options)
    shape          what its documents hold and ask (``pairs/shape.py``: further sequences,
                   comparisons, the columns its task reads, the fields the report keeps per
                   sample, its row invariants), given here or named by dotted path in the
                   kind's folder (``paths.named``), so no module of this floor imports a kind
    own_settings   the rows of the settings its folder declares, by dotted path, which the
                   settings table gathers (``settings.py``)

The settings table (``pairs/settings.py``) names in each row the kinds whose tasks take it
(None in every other task's settings; lm-eval hands every task of a run the same metadata: the
others ignore an option and say so once, ``pairs/applicability.py``).

A new kind is one row here, its folder ``kinds/<kind>/`` (its shape, its settings, its builder,
its task, its section), its line in ``commands/build.py`` and its section's entry in
``report/sections.py`` (``docs/architecture.md``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from perturbation_bench.pairs.shape import PAIR_SHAPE, Copy, DocumentShape
from perturbation_bench.paths import named

TEMPLATE = "_perturbation_template_yaml"
"""The template of the pair tasks: pairwise accuracy and its companions."""


@dataclass(frozen=True)
class Kind:
    """One kind of pair file (module docstring)."""

    name: str
    marker: str
    template: str = TEMPLATE
    task: str = "perturbation_custom"
    shape: DocumentShape | str = PAIR_SHAPE
    own_settings: str | None = None

    def setting_rows(self) -> tuple:
        """The rows of the settings its folder declares (``pairs/setting_rows.Setting``), named
        by ``own_settings``; the settings table gathers them (``pairs/settings.py``)."""
        return named(self.own_settings) if self.own_settings else ()

    @property
    def document(self) -> DocumentShape:
        """Its :class:`~perturbation_bench.pairs.shape.DocumentShape`, imported if named."""
        return named(self.shape) if isinstance(self.shape, str) else self.shape

    def invariants(self) -> list:
        """Its row invariants (``dataset/invariants.Invariant``), none if it declares none."""
        return named(self.document.invariants)() if self.document.invariants else []


# fmt: off
KINDS = (
    Kind("syn", "n_codons_changed"),
    Kind("motif", "motif"),
    Kind("controls", "shuffle"),
    Kind("variants", "alt", template="_perturbation_variants_template_yaml",
         task="perturbation_variants", shape=DocumentShape(
             columns=("chrom", "pos", "ref", "alt"),
             sample_fields=("label", "chrom", "pos", "ref", "alt", "region", "match_group", "assay",
                            "label_direction", "calibration_cell"), identity=("assay",))),
    Kind("footprints", "background_sequence", template="_perturbation_footprints_template_yaml",
         task="perturbation_footprints", shape="perturbation_bench.kinds.footprints.shape:SHAPE",
         own_settings="perturbation_bench.kinds.footprints.settings:SETTINGS"),
    Kind("recall", "context_repeat", template="_perturbation_recall_template_yaml",
         task="perturbation_recall", shape="perturbation_bench.kinds.recall.shape:SHAPE"),
)
# fmt: on
KIND = {kind.name: kind for kind in KINDS}
""":data:`KINDS` by name."""


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


def shape_of_file(columns) -> DocumentShape:
    """The shape of a file with these column names: its kind's (:func:`kind_of`), the pair's
    for a file of no kind."""
    kind = kind_of(columns)
    return KIND[kind].document if kind else PAIR_SHAPE


def kind_of(columns) -> str | None:
    """The kind of a file with these column names (module docstring); None if it has no
    kind's marker."""
    names = set(columns)
    found = [kind.name for kind in KINDS if kind.marker in names]
    return found[-1] if found else None
