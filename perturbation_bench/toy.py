"""Random stand-ins for real models and data: a single-nucleotide tokenizer, a random Llama, random pairs.

For the throughput benchmark and the tests, where no checkpoint or hub dataset can be
downloaded. The weights and sequences are random: use them to measure speed and check
exactness, never to judge a model.
"""

from __future__ import annotations

import random
from pathlib import Path

from perturbation_bench.options import reverse_complement

SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<oov>", "<dna>"]


def single_nucleotide_tokenizer():
    """A fast tokenizer with one token per base (A, C, G, T, N) plus the special tokens."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    vocab = SPECIAL_TOKENS + list("ACGTN")
    core = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token="<oov>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return wrap_tokenizer(core)


def wrap_tokenizer(core):
    """Register the special tokens on a ``tokenizers.Tokenizer`` and wrap it for transformers."""
    from transformers import PreTrainedTokenizerFast

    core.add_special_tokens(SPECIAL_TOKENS)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<oov>",
        pad_token="<pad>",
    )


def save_random_llama(
    folder: Path,
    tokenizer,
    layers: int = 2,
    hidden: int = 32,
    max_positions: int = 512,
    seed: int = 0,
    initializer_range: float = 0.5,
) -> Path:
    """Save a randomly initialised Llama (and ``tokenizer``) to ``folder``; return the folder.

    ``initializer_range`` is large on purpose: near-uniform predictions would make every pair's
    margin tiny.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return Path(folder)


def random_dna(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("ACGT") for _ in range(length))


def random_pairs(n: int, length: int, seed: int = 0, patch: int = 12) -> list[dict]:
    """``n`` rows with the columns the tasks need: a random window and a copy with one random patch."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        original = random_dna(rng, length)
        start = rng.randrange(0, length - patch)
        perturbed = original[:start] + random_dna(rng, patch) + original[start + patch :]
        rows.append(
            {
                "benchmark_id": f"pair_{seed}_{i}",
                "gene_name": f"GENE{i}",
                "strand": rng.choice("+-"),
                "original_sequence": original,
                "sequence": perturbed,
                "patch_start_in_seq": start,
            }
        )
    return rows


def write_parquet(
    rows: list[dict], data_dir: Path, config: str, name: str = "test-00000-of-00001.parquet"
) -> Path:
    """Write ``rows`` to ``data_dir/config/name`` (the hub layout); return the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(data_dir) / config / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def synthetic_genome(
    folder: Path,
    table,
    n_genes: int = 12,
    chrom_length: int = 120_000,
    seed: int = 0,
) -> tuple[Path, Path]:
    """Write ``genome.fa`` and ``annotation.gtf`` to ``folder``: random genes on two chromosomes.

    Intergenic and intronic bases are uniform; coding bases are codons drawn from ``table``'s
    usage (a start codon first, no stop inside, a stop after the last exon), so recoding changes
    realistic shares of codons. Genes alternate strands and have 2-4 CDS exons whose lengths are
    not multiples of 3, so phases 0, 1 and 2 all occur. Edge cases, always present: the first
    gene of ``chr1`` starts 50 bp from the chromosome start and the last gene of ``chr2``
    (minus strand) ends 50 bp before the chromosome end (both windows clamp); one gene has a run
    of N in its CDS; one gene's CDS is a single 45 bp exon (too short for a 60 bp offset motif);
    one gene has a second, longer transcript that is not tagged Ensembl_canonical.

    Returns:
        ``(fasta_path, gtf_path)``.
    """
    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sense = [aa for aa in table.usage if aa not in "*M"]
    chroms = {
        "chr1": list(random_dna(rng, chrom_length)),
        "chr2": list(random_dna(rng, chrom_length)),
    }
    gtf_lines = []
    per_chrom = n_genes // 2
    for g in range(n_genes):
        chrom = "chr1" if g < per_chrom else "chr2"
        slot = g % per_chrom
        strand = "+" if g % 2 == 0 else "-"
        if g == n_genes - 1:
            strand = "-"
        short = g == 3
        exon_lengths = [45] if short else [rng.randint(70, 400) for _ in range(rng.randint(2, 4))]
        if g == 5:
            exon_lengths[0] = 150
        cds = ["ATG"] + [
            _draw_codon(rng, table, rng.choice(sense)) for _ in range(sum(exon_lengths) // 3)
        ]
        cds = "".join(cds)[: sum(exon_lengths)]
        if g == 5:
            cds = cds[:63] + "N" * 12 + cds[75:]
        transcript = cds + _draw_codon(rng, table, "*")
        introns = [rng.randint(200, 800) for _ in exon_lengths[1:]]
        span = sum(exon_lengths) + sum(introns) + 3
        if slot == 0 and chrom == "chr1":
            gene_start = 50
        elif g == n_genes - 1:
            gene_start = chrom_length - 50 - span
        else:
            gene_start = slot * (chrom_length // per_chrom) + 2_000
        oriented = _lay_out(transcript, exon_lengths, introns, rng)
        genomic = oriented if strand == "+" else reverse_complement(oriented)
        chroms[chrom][gene_start : gene_start + len(genomic)] = list(genomic)
        gtf_lines += _gtf_records(chrom, strand, gene_start, len(genomic), exon_lengths, introns, g)
        if g == 1:  # a longer, non-canonical isoform: the canonical tag must win
            gtf_lines += _gtf_records(
                chrom, strand, gene_start, len(genomic), exon_lengths, introns, g,
                transcript=f"T{g}b", canonical=False, extend=9,
            )  # fmt: skip
    fasta = folder / "genome.fa"
    with fasta.open("w") as out:
        for name, bases in chroms.items():
            out.write(f">{name}\n")
            text = "".join(bases)
            out.writelines(text[i : i + 60] + "\n" for i in range(0, len(text), 60))
    gtf = folder / "annotation.gtf"
    gtf.write_text("".join(gtf_lines))
    return fasta, gtf


def _draw_codon(rng: random.Random, table, amino_acid: str) -> str:
    codons = table.usage[amino_acid]
    return rng.choices(list(codons), weights=list(codons.values()))[0]


def _lay_out(transcript: str, exon_lengths: list[int], introns: list[int], rng) -> str:
    """Transcript-oriented genomic sequence: exons separated by random introns (GT...AG)."""
    pieces, at = [], 0
    for k, length in enumerate(exon_lengths):
        last = k == len(exon_lengths) - 1
        pieces.append(transcript[at : at + length + (3 if last else 0)])
        at += length
        if not last:
            pieces.append("GT" + random_dna(rng, introns[k] - 4) + "AG")
    return "".join(pieces)


def _gtf_records(chrom, strand, start, length, exon_lengths, introns, g, transcript=None,
                 canonical=True, extend=0) -> list[str]:  # fmt: skip
    """GTF lines (1-based, closed) for one transcript's CDS exons, listed 5' to 3'."""
    transcript = transcript or f"T{g}"
    tag = 'tag "basic"; tag "Ensembl_canonical";' if canonical else 'tag "basic";'
    attributes = f'gene_id "G{g}"; transcript_id "{transcript}"; gene_name "GENE{g}"; {tag}'
    lines, offset, cds_before = [], 0, 0
    for k, exon in enumerate(exon_lengths):
        exon_length = exon + (extend if k == len(exon_lengths) - 1 else 0)
        if strand == "+":
            first, last = start + offset + 1, start + offset + exon_length
        else:
            last = start + length - offset
            first = last - exon_length + 1
        phase = (3 - cds_before % 3) % 3
        lines.append(f"{chrom}\ttoy\tCDS\t{first}\t{last}\t.\t{strand}\t{phase}\t{attributes}\n")
        cds_before += exon_length
        offset += exon + (introns[k] if k < len(introns) else 0)
    return lines
