"""CDS exons of one transcript per gene, read from a GTF (gtfparse) or a GFF3 (gffutils, streamed).

Both formats become one table of CDS records (chromosome, 1-based closed coordinates, strand,
phase, transcript, gene, gene name, tags), and one function chooses transcripts and ranks exons,
so a GTF and the equivalent GFF3 give the same exons. GFF3 links a CDS to its transcript by
``Parent``: gene -> mRNA (or transcript) -> CDS as in Ensembl and NCBI, or gene -> CDS as in SGD,
where the gene stands for its single transcript; a CDS with several parents counts once per
parent. Gene names come from the gene's ``Name`` (or ``gene_name``/``gene``) attribute.

Coordinates are converted from the 1-based, closed ``[start, end]`` of both formats to 0-based,
half-open ``[start, end)``. Transcript choice per gene: the transcript tagged ``Ensembl_canonical`` if
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


GFF3_SUFFIXES = (".gff3", ".gff", ".gff3.gz", ".gff.gz")


def is_gff3(path: str | Path) -> bool:
    """Whether ``path`` names a GFF3 file by its extension."""
    return str(path).lower().endswith(GFF3_SUFFIXES)


def read_cds_exons(annotation: str | Path, gff3: bool | None = None) -> list[CdsExon]:
    """All CDS exons of the chosen transcript of every gene, sorted by chromosome and position.

    ``gff3``: read the file as GFF3 (True) or GTF (False); None decides by its extension.
    """
    if gff3 is None:
        gff3 = is_gff3(annotation)
    table = read_gff3_cds(annotation) if gff3 else read_gtf_cds(annotation)
    if table.empty:
        raise DataSourceError(f"{annotation}: no CDS features")
    for column in ("transcript_id", "gene_id"):
        if column not in table.columns or table[column].isna().any():
            raise DataSourceError(f"{annotation}: CDS features lack the {column!r} attribute")
    return choose_transcripts(table)


def exons_of(gtf: str | None = None, gff3: str | None = None) -> list[CdsExon]:
    """:func:`read_cds_exons` of a command's ``--gtf`` or ``--gff3`` (a ``--gtf`` file named
    ``.gff3``/``.gff`` is read as GFF3)."""
    return read_cds_exons(gff3 or gtf, gff3=True if gff3 else None)


def read_exon_spans(annotation: str | Path, gff3: bool, transcripts: set[str]) -> dict:
    """``transcript_id -> [(start0, end), ...]`` of the ``exon`` records of ``transcripts``
    (GTF: by ``transcript_id``; GFF3: by ``Parent``), sorted; transcripts without any left out."""
    spans: dict[str, list] = {}
    exons = _gff3_exons(annotation) if gff3 else _gtf_exons(annotation)
    for transcript, start, end in exons:
        if transcript in transcripts:
            spans.setdefault(transcript, []).append((start, end))
    return {transcript: sorted(found) for transcript, found in spans.items()}


def _gff3_exons(annotation: str | Path):
    """``(parent, start0, end)`` of each parent of each GFF3 ``exon`` record."""
    import gffutils

    try:
        for feature in gffutils.DataIterator(str(annotation)):
            if feature.featuretype == "exon":
                for parent in feature.attributes.get("Parent", []):
                    yield parent, feature.start - 1, feature.end
    except Exception as err:  # gffutils raises ValueErrors and its own parse errors alike
        raise DataSourceError(f"cannot read GFF3 {annotation}: {err}") from None


def _gtf_exons(annotation: str | Path):
    """``(transcript_id, start0, end)`` of each GTF ``exon`` record."""
    import gtfparse

    try:
        table = gtfparse.read_gtf(str(annotation), features={"exon"})
    except Exception as err:  # as in read_gtf_cds
        raise DataSourceError(f"cannot read GTF {annotation}: {err}") from None
    if not len(table) or "transcript_id" not in table.columns:
        return []
    columns = (table["transcript_id"], table["start"], table["end"])
    return [(t, int(start) - 1, int(end)) for t, start, end in zip(*columns, strict=True)]


def read_gtf_cds(gtf: str | Path):
    """The CDS records of a GTF (plain or .gz) as a table."""
    import gtfparse

    try:
        return gtfparse.read_gtf(str(gtf), features={"CDS"})
    except Exception as err:  # gtfparse raises bare ValueErrors and pandas parser errors alike
        raise DataSourceError(f"cannot read GTF {gtf}: {err}") from None


def read_gff3_cds(gff3: str | Path):
    """The CDS records of a GFF3 (plain or .gz) as a table like :func:`read_gtf_cds`'s.

    Streams the file feature by feature; memory holds the CDS records and one small record per
    gene and transcript, never the whole file.
    """
    import gffutils
    import pandas as pd

    cds, parents, names = [], {}, {}
    try:
        for feature in gffutils.DataIterator(str(gff3)):
            attributes = feature.attributes
            identifier = attributes.get("ID", [None])[0]
            if feature.featuretype == "CDS":
                for parent in attributes.get("Parent", []):
                    cds.append(
                        (
                            feature.seqid,
                            feature.start,
                            feature.end,
                            feature.strand,
                            feature.frame,
                            parent,
                        )
                    )
            elif identifier is not None:
                parents[identifier] = (
                    attributes.get("Parent", [None])[0],
                    feature.featuretype,
                    ",".join(attributes.get("tag", [])),
                )
                name = _feature_name(attributes)
                if name:
                    names[identifier] = name
    except Exception as err:  # gffutils raises ValueErrors and its own parse errors alike
        raise DataSourceError(f"cannot read GFF3 {gff3}: {err}") from None
    return pd.DataFrame(_gff3_rows(gff3, cds, parents, names))


def _feature_name(attributes: dict) -> str | None:
    """A GFF3 feature's name: its ``Name``, else its ``gene_name``, else its ``gene``."""
    return (
        attributes.get("Name") or attributes.get("gene_name") or attributes.get("gene") or [None]
    )[0]


def _gff3_rows(gff3, cds: list[tuple], parents: dict, names: dict) -> list[dict]:
    """The rows of :func:`read_gff3_cds`, one per CDS record and parent: its transcript's gene
    is the transcript's parent (the transcript itself where the CDS hangs from a gene or the
    transcript has no parent); a phase other than 0, 1 or 2 is refused."""
    rows = []
    for seqid, start, end, strand, phase, transcript in cds:
        if phase not in ("0", "1", "2"):
            raise DataSourceError(
                f"{gff3}: CDS of {transcript} at {seqid}:{start} has phase {phase!r}"
            )
        gene_parent, kind, tags = parents.get(transcript, (None, "gene", ""))
        gene = transcript if kind == "gene" or gene_parent is None else gene_parent
        rows.append(
            {
                "seqname": seqid,
                "start": start,
                "end": end,
                "strand": strand,
                "frame": int(phase),
                "transcript_id": transcript,
                "gene_id": gene,
                "gene_name": names.get(gene, ""),
                "tag": tags,
            }
        )
    return rows


def choose_transcripts(table) -> list[CdsExon]:
    """One transcript per gene (module docstring), its CDS exons ranked in transcript order."""
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
        CdsExon(
            str(chrom),
            int(start) - 1,
            int(end),
            str(strand),
            int(phase),
            int(rank),
            str(transcript),
            str(gene),
            str(name or ""),
            int(before),
        )
        for chrom, start, end, strand, phase, rank, transcript, gene, name, before in zip(
            rows["seqname"],
            rows["start"],
            rows["end"],
            rows["strand"],
            rows["frame"],
            rows["exon_rank"],
            rows["transcript_id"],
            rows["gene_id"],
            rows["gene_name"],
            rows["cds_before"],
            strict=True,
        )
    ]
    return sorted(exons, key=lambda e: (e.chrom, e.start, e.transcript_id))
