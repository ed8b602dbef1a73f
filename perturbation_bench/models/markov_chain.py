"""An order-K Markov chain over DNA bases, counted on a genome: the composition floor.

Counting (both strands). Every j-mer (j = 1 .. K+1) of every chromosome that contains only
A, C, G, T (either case) is counted, and so is its reverse complement. Chromosomes are read in
chunks through pyfaidx (plain or bgzip FASTA), so memory holds one chunk and the count tables
(4 + 16 + ... + 4^(K+1) int64 counts: 44 MiB at K = 10).

Probability of base ``b`` after the context ``c`` of the ``j`` bases before it::

    P(b | c) = (N(c b) + a) / (N(c) + 4a),     N(c) = sum over b' of N(c b')

with the pseudocount ``a`` (default 1). The context is the K bases before ``b``; the first bases
of a sequence use the shorter context they have (the order-j chain for j preceding bases), and a
context that contains a letter other than ACGT backs off to its longest suffix without one. A
target letter other than ACGT contributes ``log(1/4)``. ``LL(continuation | context)`` sums
``log P`` over the bases of the continuation, the context string conditioning the first ones.

The sum is exactly rounded (``math.fsum``), so it does not depend on the order of its terms:
two sequences with the same first K bases and the same (K+1)-mer counts (a dinucleotide shuffle
at K = 1, a base permutation at K = 0) get the very same log-likelihood, a tie, never a
difference in the last bits.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from perturbation_bench.dna import BASES
from perturbation_bench.errors import DataSourceError, OptionsError

log = logging.getLogger(f"lm_eval.{__name__}")
MAX_ORDER = 12
"""The highest order counted (``4 ** (MAX_ORDER + 1)`` contexts' counts held in memory)."""

CHUNK = 8_000_000
"""Bases read at a time from the FASTA."""

_CODES = np.full(256, 4, dtype=np.uint8)
for _i, _base in enumerate(BASES):
    _CODES[ord(_base)] = _CODES[ord(_base.lower())] = _i


def encode(sequence: str) -> np.ndarray:
    """2-bit codes of ``sequence``: A, C, G, T -> 0..3 (either case), anything else -> 4."""
    return _CODES[np.frombuffer(sequence.encode("ascii", "replace"), dtype=np.uint8)]


def count_kmers(codes: np.ndarray, max_k: int, n_starts: int, tables: list[np.ndarray]) -> None:
    """Add to ``tables[j - 1]`` the j-mers (j = 1 .. max_k) of ``codes`` that start in
    ``[0, n_starts)`` and hold only ACGT (forward strand only)."""
    bad = np.concatenate([[0], np.cumsum(codes == 4)])
    clipped = np.minimum(codes, 3).astype(np.int64)
    index = np.zeros(len(codes), dtype=np.int64)
    for j in range(1, max_k + 1):
        m = len(codes) - j + 1
        if m <= 0:
            return
        index = index[:m] * 4 + clipped[j - 1 : j - 1 + m]
        starts = min(m, n_starts)
        valid = bad[j : j + starts] == bad[:starts]
        tables[j - 1] += np.bincount(index[:starts][valid], minlength=4**j)


def reverse_complement_index(k: int) -> np.ndarray:
    """For every k-mer index (base 4, first base most significant), its reverse complement's."""
    index = np.arange(4**k, dtype=np.int64)
    out = np.zeros_like(index)
    for _ in range(k):
        out = out * 4 + (3 - index % 4)
        index //= 4
    return out


def chain_settings(order, pseudocount) -> tuple[int, float]:
    """``order`` as a whole number from 0 to :data:`MAX_ORDER` and ``pseudocount`` as a number
    above 0, from numbers or their text (model arguments).

    Raises:
        OptionsError: either out of range or not a number.
    """
    text = str(order).strip()
    if isinstance(order, bool) or not text.isdigit() or int(text) > MAX_ORDER:
        raise OptionsError(
            f"kmer-markov: order must be a whole number from 0 to {MAX_ORDER}, got {text!r}"
        )
    try:
        value = float(pseudocount)
    except (TypeError, ValueError):
        value = -1.0
    if not value > 0:
        raise OptionsError(f"kmer-markov: pseudocount must be a number > 0, got {pseudocount!r}")
    return int(text), value


class MarkovChain:
    """Counts ``tables[j - 1]`` of every j-mer (j = 1 .. order + 1) and the probabilities above."""

    def __init__(self, tables: list[np.ndarray], order: int, pseudocount: float = 1.0) -> None:
        if len(tables) != order + 1:
            raise OptionsError(
                f"need {order + 1} count tables for order {order}, got {len(tables)}"
            )
        self.order, self.pseudocount = chain_settings(order, pseudocount)
        self.tables = tables
        self._log_probs = [self._table_log_probs(t) for t in tables]

    def _table_log_probs(self, counts: np.ndarray) -> np.ndarray:
        """log P(b | c) for every (j+1)-mer ``c b``, as a table indexed like ``counts``."""
        by_context = counts.reshape(-1, 4).astype(np.float64)
        totals = by_context.sum(axis=1, keepdims=True)
        a = self.pseudocount
        return np.log((by_context + a) / (totals + 4 * a)).reshape(-1)

    @classmethod
    def count_genome(cls, fasta: str | Path, order: int, pseudocount: float = 1.0) -> MarkovChain:
        """Count both strands of every chromosome of ``fasta`` (module docstring)."""
        import pyfaidx
        from tqdm import tqdm

        order, pseudocount = chain_settings(order, pseudocount)
        try:
            genome = pyfaidx.Fasta(str(fasta), as_raw=True)
        except (OSError, ValueError, pyfaidx.FastaIndexingError) as err:
            raise DataSourceError(f"cannot open FASTA {fasta}: {err}") from None
        tables = [np.zeros(4**j, dtype=np.int64) for j in range(1, order + 2)]
        total = sum(len(record) for record in genome.values())
        with tqdm(
            total=total, unit="bp", unit_scale=True, desc=f"counting {order + 1}-mers"
        ) as bar:
            for record in genome.values():
                for start in range(0, len(record), CHUNK):
                    end = min(len(record), start + CHUNK)
                    codes = encode(record[start : min(len(record), end + order)])
                    count_kmers(codes, order + 1, end - start, tables)
                    bar.update(end - start)
        for j, table in enumerate(tables, start=1):
            table += table[reverse_complement_index(j)]
        return cls(tables, order, pseudocount)

    def save(self, path: Path, source: dict) -> None:
        """Write the counts and what they were counted from (``source``) to ``path`` (npz)."""
        arrays = {f"n{j}": table for j, table in enumerate(self.tables, start=1)}
        np.savez_compressed(path, order=self.order, source=repr(sorted(source.items())), **arrays)

    @classmethod
    def load(cls, path: Path, order: int, source: dict, pseudocount: float = 1.0):
        """The chain cached at ``path`` if it was counted at ``order`` from ``source``, else None."""
        try:
            with np.load(path) as cached:
                if int(cached["order"]) != order or str(cached["source"]) != repr(
                    sorted(source.items())
                ):
                    return None
                tables = [cached[f"n{j}"] for j in range(1, order + 2)]
        except (OSError, KeyError, ValueError):
            return None
        return cls(tables, order, pseudocount)

    def log_likelihood(self, context: str, continuation: str) -> float:
        """``sum log P`` over the bases of ``continuation`` after ``context`` (module docstring)."""
        context = context[max(0, len(context) - self.order) :]  # all a base can condition on
        codes = encode(context + continuation)
        first = len(context)
        positions = np.arange(first, len(codes))
        # bases since the last non-ACGT letter before each position, capped at the order
        last_bad = np.maximum.accumulate(np.where(codes == 4, np.arange(len(codes)), -1))
        before = np.concatenate([[-1], last_bad[:-1]])[positions]
        lengths = np.minimum(positions - before - 1, self.order)
        targets = codes[positions]
        terms = [np.full(int(np.sum(targets == 4)), math.log(0.25))]
        clipped = np.minimum(codes, 3).astype(np.int64)
        for length in range(self.order + 1):
            chosen = positions[(lengths == length) & (targets != 4)]
            if chosen.size == 0:
                continue
            index = np.zeros(chosen.size, dtype=np.int64)
            for offset in range(length, -1, -1):  # the (length + 1)-mer ending at each position
                index = index * 4 + clipped[chosen - offset]
            terms.append(self._log_probs[length][index])
        return math.fsum(np.concatenate(terms).tolist())


def chain_for(fasta: str | Path, order: int, pseudocount: float = 1.0, counts: str | None = None):
    """The chain of ``fasta`` at ``order``: from the cache (``counts`` or next to the FASTA) when
    it matches the FASTA's size and modification time, else counted and cached."""
    fasta = Path(fasta)
    if not fasta.is_file():
        raise DataSourceError(f"FASTA {fasta} not found")
    stat = fasta.stat()
    source = {"fasta": str(fasta.resolve()), "bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    path = Path(counts) if counts else fasta.with_name(f"{fasta.name}.kmer-markov-order{order}")
    path = path.with_name(path.name.removesuffix(".npz") + ".npz")  # numpy adds it on save
    chain = MarkovChain.load(path, order, source, pseudocount)
    if chain is not None:
        log.info("kmer-markov: counts of %s at order %d read from %s", fasta, order, path)
        return chain
    chain = MarkovChain.count_genome(fasta, order, pseudocount)
    try:
        chain.save(path, source)
        log.info("kmer-markov: counts cached at %s", path)
    except OSError as err:
        log.warning("kmer-markov: cannot cache the counts at %s (%s); pass counts=PATH", path, err)
    return chain
