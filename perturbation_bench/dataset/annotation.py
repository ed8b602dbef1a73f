"""CDS exons of one transcript per gene, read from a GTF with gtfparse.

Coordinates are converted from GTF's 1-based, closed ``[start, end]`` to 0-based, half-open
``[start, end)``. Transcript choice per gene: the transcript tagged ``Ensembl_canonical`` if
there is one, else the one with the longest total CDS (ties: smallest transcript id). Exons are
ranked 1, 2, ... in transcript order (5' to 3' on the transcript's strand).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from perturbation_bench.errors import DataSourceError


@dataclass(frozen=True)
class CdsExon:
    """One CDS exon of a chosen transcript (0-based, half-open genome coordinates)."""

    chrom: str
    start: int
    end: int
    strand: str
    phase: int
    exon_rank: int
    transcript_id: str
    gene_id: str
    gene_name: str
    cds_before: int  # CDS bases of this transcript upstream of this exon (transcript order)

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def expected_phase(self) -> int:
        """The phase that continues the previous exons' reading frame."""
        return (3 - self.cds_before % 3) % 3


def read_cds_exons(gtf: str | Path) -> list[CdsExon]:
    """All CDS exons of the chosen transcript of every gene, sorted by chromosome and position."""
    import gtfparse

    try:
        table = gtfparse.read_gtf(str(gtf), features={"CDS"})
    except Exception as err:  # gtfparse raises bare ValueErrors and pandas parser errors alike
        raise DataSourceError(f"cannot read GTF {gtf}: {err}") from None
    if table.empty:
        raise DataSourceError(f"{gtf}: no CDS features")
    for column in ("transcript_id", "gene_id"):
        if column not in table.columns:
            raise DataSourceError(f"{gtf}: CDS features lack the {column!r} attribute")
    tags = table["tag"].astype(str) if "tag" in table.columns else None
    table = table.assign(
        length=table["end"] - table["start"] + 1,
        canonical=tags.str.contains("Ensembl_canonical") if tags is not None else False,
    )
    per_transcript = table.groupby("transcript_id", sort=True).agg(
        gene_id=("gene_id", "first"), cds=("length", "sum"), canonical=("canonical", "any")
    )
    chosen = (
        per_transcript.reset_index()
        .sort_values(
            ["gene_id", "canonical", "cds", "transcript_id"], ascending=[True, False, False, True]
        )
        .drop_duplicates("gene_id")["transcript_id"]
    )
    rows = table.loc[table["transcript_id"].isin(set(chosen))]
    rows = rows.assign(
        gene_name=rows["gene_name"] if "gene_name" in rows.columns else "",
        upstream_first=rows["start"].where(rows["strand"] != "-", -rows["start"]),
    ).sort_values(["transcript_id", "upstream_first"])
    by_transcript = rows.groupby("transcript_id", sort=False)
    rows = rows.assign(
        exon_rank=by_transcript.cumcount() + 1,
        cds_before=by_transcript["length"].cumsum() - rows["length"],
    )
    exons = [
        CdsExon(str(chrom), int(start) - 1, int(end), str(strand), int(phase), int(rank),
                str(transcript), str(gene), str(name or ""), int(before))
        for chrom, start, end, strand, phase, rank, transcript, gene, name, before in zip(
            rows["seqname"], rows["start"], rows["end"], rows["strand"], rows["frame"],
            rows["exon_rank"], rows["transcript_id"], rows["gene_id"], rows["gene_name"],
            rows["cds_before"],
        )
    ]  # fmt: skip
    return sorted(exons, key=lambda e: (e.chrom, e.start, e.transcript_id))
