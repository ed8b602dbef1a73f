"""The input formats users bring to a build, one reader per format. Each reads its file, checks
it and refuses what it cannot read with the file, the line or row and the reason; none knows the
build that calls it.

- ``fasta.py``: random access to a FASTA genome, and a chromosome's name in it;
- ``annotation.py``: CDS exons of one transcript per gene, from a GTF or a GFF3;
- ``variant_files.py``: variant files (VCF, tables);
- ``labels.py``: the labels the variant readers take (truth values, finite numbers);
- ``mavedb.py``: MaveDB score tables, made variants through ``hgvs.py``;
- ``hgvs.py``: genomic HGVS (``g.``) changes made alleles;
- ``nabench.py``: NABench's assay files (wild type against measured sequence);
- ``bed.py``: BED regions;
- ``meme.py``: transcription-factor motifs of a MEME file as consensus sequences;
- ``backgrounds.py``: the background windows of a footprint build (FASTA, lines, a controls
  config, BED regions).
"""
