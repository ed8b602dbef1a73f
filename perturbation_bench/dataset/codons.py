"""Codon usage tables: the most frequent synonym of each amino acid, and translation.

Tables come from the ``python-codon-tables`` package (Kazusa frequencies, two decimals) or from
a user CSV with the columns ``codon,amino_acid,frequency`` (``*`` for stops), one row per codon
of the standard genetic code. Ties in frequency are broken alphabetically, so the choice is
deterministic. Methionine (``M``), tryptophan (``W``) and stop codons are never recoded.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from perturbation_bench.errors import OptionsError

SPECIES_TABLES = {
    "human": "h_sapiens_9606",
    "mouse": "m_musculus_10090",
    "yeast": "s_cerevisiae_4932",
    "chicken": "g_gallus_9031",
    "fly": "d_melanogaster_7227",
    "worm": "c_elegans_6239",
    "e_coli": "e_coli_316407",
    "b_subtilis": "b_subtilis_1423",
}
NEVER_RECODED = frozenset("MW*")


@dataclass(frozen=True)
class CodonTable:
    """Codon usage of one species.

    Attributes:
        source: where the frequencies came from (recorded in ``codon_usage_source``).
        usage: amino acid (``*`` = stop) -> codon -> relative frequency.
    """

    source: str
    usage: dict[str, dict[str, float]]
    code: dict[str, str] = field(init=False, repr=False)
    best: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        code = {codon: aa for aa, codons in self.usage.items() for codon in codons}
        if len(code) != 64:
            raise OptionsError(f"codon table {self.source} covers {len(code)} codons, expected 64")
        best = {aa: min(codons, key=lambda c: (-codons[c], c)) for aa, codons in self.usage.items()}
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "best", best)

    def translate(self, sequence: str) -> str:
        """Amino acids of the complete codons of ``sequence`` (``X`` for a codon with other letters)."""
        return "".join(
            self.code.get(sequence[i : i + 3], "X") for i in range(0, len(sequence) - 2, 3)
        )

    def is_eligible(self, codon: str) -> bool:
        """A codon that recoding may change: a known codon of an amino acid other than M or W."""
        return codon in self.code and self.code[codon] not in NEVER_RECODED

    def most_frequent_synonym(self, codon: str) -> str:
        """The highest-frequency codon of the same amino acid (may be ``codon`` itself)."""
        return self.best[self.code[codon]]


def load_codon_table(species: str, csv_path: str | Path | None = None) -> CodonTable:
    """The table for ``species`` from python-codon-tables, or from ``csv_path`` when given.

    Raises:
        OptionsError: unknown species without a CSV, or a malformed CSV.
    """
    if csv_path is not None:
        return _table_from_csv(Path(csv_path))
    import python_codon_tables

    name = SPECIES_TABLES.get(species, species)
    if name not in python_codon_tables.available_codon_tables_names:
        raise OptionsError(
            f"no codon table for species {species!r}; python-codon-tables has "
            f"{', '.join(SPECIES_TABLES)} (or a table name such as h_sapiens_9606); "
            "for other species pass --codon-table FILE.csv (columns codon,amino_acid,frequency)"
        )
    usage = python_codon_tables.get_codons_table(name)
    return CodonTable(source=f"python-codon-tables:{name}", usage=usage)


def _table_from_csv(path: Path) -> CodonTable:
    usage: dict[str, dict[str, float]] = {}
    try:
        with path.open(newline="") as handle:
            for line, row in enumerate(csv.DictReader(handle), start=2):
                try:
                    codon = row["codon"].strip().upper().replace("U", "T")
                    usage.setdefault(row["amino_acid"].strip(), {})[codon] = float(row["frequency"])
                except (KeyError, TypeError, ValueError, AttributeError) as err:
                    raise OptionsError(
                        f"{path}: line {line}: expected columns codon,amino_acid,frequency ({err})"
                    ) from None
    except OSError as err:
        raise OptionsError(f"cannot read codon table {path}: {err}") from None
    return CodonTable(source=str(path), usage=usage)
