"""What a kind's documents hold and ask, declared by the kind and read by the core.

Every document holds its pair: ``original_sequence`` and the perturbed copy ``sequence`` (kept as
its changed span, ``changes.py``). A kind declares the rest in one :class:`DocumentShape` (its row
of ``pairs/kinds.py`` holds it, or names it by dotted path in the kind's folder), and the files'
check (``files.py``), the documents (``tasks/documents.py``), their requests
(``tasks/document_requests.py``), the report's samples (``report/samples.py``) and ``validate``
read it from there:

    copies         further sequence columns, each a copy of the original changed in one span:
                   checked by the rules of ``sequence`` and kept, as it is, as its changed span
                   (``scoring_<name>_start``, ``scoring_<name>_change``: :class:`Copy`)
    comparisons    the pairs of sequences a document asks lm-eval to compare, in request order,
                   the pair itself first; each is asked as a pair is (``requests.py``), so a
                   document makes ``requests per pair x len(comparisons)`` requests
    columns        the columns its task reads besides the pair's, refused by name when missing
    sample_fields  the document fields the report keeps per sample
    identity       the columns that enter a pair's id besides its two sequences
                   (``identity.pair_id``: a variant's ``assay``, so two assays' replicates
                   of one pair stay two pairs)
    invariants     the dotted path of a function of no arguments that returns its row
                   invariants (``perturbation-bench validate``, ``dataset/invariants.py``)
    requests       for a kind whose rows hold no pair of windows: the loglikelihood requests of
                   a document, as (context, continuation) columns (:class:`Request`), in order;
                   they share one continuation, as lm-eval asks a task of several inputs (the
                   contexts are its choices), and the first is compared with the second. Its
                   file holds these columns in place of the pair's (``files.py``): one length
                   per row across its contexts, letters of ``dna.LETTERS``. None: the pair's
                   requests (``requests.py``)
    compared       how its logs name the two log-likelihoods of its pair, ``LL(first)`` and
                   ``LL(second)``: ``original`` and ``perturbed`` unless it says

A sequence of a comparison is named ``original``, ``perturbed`` or a copy's ``name``; a
comparison after the first records ``LL(first) - LL(second)`` in the sample field ``margin``.
"""

from __future__ import annotations

from dataclasses import dataclass

from perturbation_bench.pairs.fields import SEQUENCE_COLUMNS
from perturbation_bench.pairs.identity import pair_id

ORIGINAL_NAME, PERTURBED_NAME = "original", "perturbed"
"""The names of the pair's two sequences in a comparison."""


@dataclass(frozen=True)
class Request:
    """One loglikelihood request of a document, by column: ``continuation`` scored after
    ``context`` (module docstring)."""

    context: str
    continuation: str


@dataclass(frozen=True)
class Copy:
    """A sequence column held as a copy of the original changed in one span (module docstring)."""

    column: str
    name: str

    @property
    def start(self) -> str:
        """The document field of where its changed span starts."""
        return f"scoring_{self.name}_start"

    @property
    def change(self) -> str:
        """The document field of its characters in that span."""
        return f"scoring_{self.name}_change"


@dataclass(frozen=True)
class Comparison:
    """Two sequences a document compares, by name; ``margin``: the sample field of
    ``LL(first) - LL(second)`` (None for the pair's own, which the report reads as the pair)."""

    first: str
    second: str
    margin: str | None = None


PAIR = Comparison(ORIGINAL_NAME, PERTURBED_NAME)
"""The comparison of every document: its original against its perturbed copy."""


@dataclass(frozen=True)
class DocumentShape:
    """What one kind's documents hold and ask (module docstring)."""

    copies: tuple[Copy, ...] = ()
    comparisons: tuple[Comparison, ...] = (PAIR,)
    columns: tuple[str, ...] = ()
    sample_fields: tuple[str, ...] = ()
    identity: tuple[str, ...] = ()
    invariants: str | None = None
    requests: tuple[Request, ...] | None = None
    compared: tuple[str, str] = (ORIGINAL_NAME, PERTURBED_NAME)

    def __post_init__(self) -> None:
        if self.requests is not None:
            self._check_requests()
        names = {ORIGINAL_NAME, PERTURBED_NAME, *(copy.name for copy in self.copies)}
        unknown = {n for c in self.comparisons for n in (c.first, c.second)} - names
        unnamed = [c for c in self.comparisons[1:] if not c.margin]
        if self.comparisons[:1] != (PAIR,) or unknown or unnamed:
            raise ValueError(
                f"a document shape compares its pair first, then any of {sorted(names)}, each "
                "comparison after the pair with its margin's field"
            )

    def _check_requests(self) -> None:
        continuations = {request.continuation for request in self.requests}
        if len(self.requests) != 2 or len(continuations) != 1 or self.copies:
            raise ValueError(
                "a document shape of requests asks two, with one continuation, and holds no "
                "copies of a pair"
            )

    @property
    def sequence_columns(self) -> tuple[str, ...]:
        """The columns of sequences its files hold: its requests' contexts and continuation, or
        the pair's and its copies'."""
        if self.requests is not None:
            return (*self.contexts, self.requests[0].continuation)
        return (*SEQUENCE_COLUMNS, *(copy.column for copy in self.copies))

    @property
    def checked_columns(self) -> tuple[str, ...]:
        """The columns the file check reads (``files.py``): its sequences, and for a shape of
        requests the columns its task reads (no other task reads its files)."""
        return self.sequence_columns + (self.columns if self.requests is not None else ())

    @property
    def contexts(self) -> tuple[str, ...]:
        """The context columns of its requests, in request order (none for the pair's)."""
        return tuple(request.context for request in self.requests or ())

    def pair_id(self, original: str, perturbed: str, row) -> str:
        """The id of a pair of this shape: its sequences and ``row``'s :attr:`identity`."""
        return pair_id(original, perturbed, *(row.get(name) for name in self.identity))

    def row_pair_id(self, row) -> str:
        """:meth:`pair_id` of a file's row: its pair's two sequences, or for a shape of requests
        the continuation twice (the document's pair, whose contexts differ)."""
        if self.requests is not None:
            target = row[self.requests[0].continuation]
            return self.pair_id(target, target, row)
        return self.pair_id(row[SEQUENCE_COLUMNS[0]], row[SEQUENCE_COLUMNS[1]], row)

    @property
    def margins(self) -> tuple[str, ...]:
        """The sample fields of its comparisons after the pair's."""
        return tuple(c.margin for c in self.comparisons[1:])


PAIR_SHAPE = DocumentShape()
"""The shape of a kind that declares nothing more: the pair, compared once."""
