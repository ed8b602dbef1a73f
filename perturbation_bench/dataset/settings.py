"""What decides a ``build syn``/``build motif`` output besides the input files, and the rules
those settings must follow:

- ``0 < optimization_rate <= 1``, and 1 with ``recode = "shuffle"`` (every eligible codon takes
  part in the shuffle); ``window > 0`` and ``0 <= flank < window``;
- a motif repeat keeps the reading frame (a multiple of 3, starting on a codon boundary) and
  holds no stop codon, unless ``--allow-stop-or-frameshift`` asks for it; its unit is A/C/G/T;
- ``motif_human`` names the published config only (CAG x 10 at offset 60): another repeat gets
  a name of its own; so do ``syn_human`` and ``syn_mouse`` (the most frequent codons), which a
  codon shuffle may not take.
"""

from __future__ import annotations

from dataclasses import dataclass

from perturbation_bench import __version__
from perturbation_bench.dna import BASES
from perturbation_bench.errors import OptionsError


@dataclass(frozen=True)
class BuildSettings:
    """Everything that decides a build's output besides the input files."""

    kind: str  # "syn" or "motif"
    species: str
    config: str
    annotation_source: str
    genome_assembly: str
    window: int = 8192
    flank: int = 1024
    seed: int = 0
    max_pairs: int | None = None
    optimization_rate: float = 1.0
    recode: str = "most_frequent"  # or "shuffle" (dataset/build.py)
    motif: str = "CAG"
    repeats: int = 10
    offset: int = 60

    @property
    def script_version(self) -> str:
        return (
            f"perturbation-bench {__version__}; window={self.window}; upstream_flank={self.flank}; "
            "transcript=Ensembl_canonical|longest_cds; coordinates=0-based,half-open"
        )


def check_settings(settings: BuildSettings, allow_disruptive: bool = False) -> None:
    """Raise :class:`OptionsError` for settings no build should run with (module docstring)."""
    if not 0 < settings.optimization_rate <= 1:
        raise OptionsError(
            f"--optimization-rate must be in (0, 1], got {settings.optimization_rate}"
        )
    if settings.recode == "shuffle" and settings.optimization_rate != 1:
        raise OptionsError(
            "--optimization-rate applies to --recode most_frequent; a shuffle "
            "permutes every eligible codon"
        )
    if settings.recode == "shuffle" and settings.config in ("syn_human", "syn_mouse"):
        raise OptionsError(
            f"{settings.config} is a published config (the most frequent codons); "
            f"name the codon control with --config, e.g. syn_shuffle_{settings.species}"
        )
    if settings.window < 1 or not 0 <= settings.flank < settings.window:
        raise OptionsError(
            f"need window > 0 and 0 <= flank < window, got {settings.window}, {settings.flank}"
        )
    if settings.kind == "motif":
        check_motif(settings, allow_disruptive)


RECODINGS = {"most_frequent": "most_frequent_synonym", "shuffle": "synonymous_codon_shuffle"}
"""``--recode`` -> the ``recoding_mode`` column."""
STOP_CODONS = ("TAA", "TAG", "TGA")
PUBLISHED_MOTIF = {"config": "motif_human", "motif": "CAG", "repeats": 10, "offset": 60}


def check_motif(settings: BuildSettings, allow_disruptive: bool) -> None:
    """The repeat must keep the reading frame and code for amino acids, unless the user asks."""
    repeat = settings.motif * settings.repeats
    if set(settings.motif) - set(BASES) or not repeat or settings.offset % 3:
        raise OptionsError(
            "--motif must be A/C/G/T letters and --offset a multiple of 3 (the patch starts on "
            "a codon boundary)"
        )
    stops = sorted({repeat[i : i + 3] for i in range(0, len(repeat) - 2, 3)} & set(STOP_CODONS))
    if (stops or len(repeat) % 3) and not allow_disruptive:
        raise OptionsError(
            f"{settings.repeats} x {settings.motif} = {len(repeat)} bp "
            + (
                f"has the in-frame stop codon(s) {', '.join(stops)}"
                if stops
                else "shifts the reading frame (not a multiple of 3)"
            )
            + "; pass --allow-stop-or-frameshift if that is what you want to test"
        )
    _check_published_name(settings)


def _check_published_name(settings: BuildSettings) -> None:
    """Refuse the published motif config's name for any other repeat, count or offset."""
    published = {key: PUBLISHED_MOTIF[key] for key in ("motif", "repeats", "offset")}
    if (
        settings.config == PUBLISHED_MOTIF["config"]
        and {key: getattr(settings, key) for key in published} != published
    ):
        raise OptionsError(
            f"motif_human is the published config (CAG x 10, offset 60); name this dataset "
            f"after its own repeat with --config, e.g. motif_{settings.motif.lower()}_{settings.species}"
        )


def add_arguments(parser) -> None:
    """The options of ``build syn`` and ``build motif`` (the parser's name says which)."""
    parser.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    annotation = parser.add_mutually_exclusive_group(required=True)
    annotation.add_argument(
        "--gtf", help="annotation GTF (plain or .gz; a .gff3/.gff name is read as GFF3)"
    )
    annotation.add_argument("--gff3", help="annotation GFF3 (plain or .gz), e.g. NCBI RefSeq, SGD")
    parser.add_argument(
        "--species", required=True, help="human, mouse, yeast, ... (names the config)"
    )
    parser.add_argument("--out", required=True, help="output folder (hub layout)")
    parser.add_argument("--config", help="config name (default: <kind>_<species>)")
    parser.add_argument("--window", type=int, default=8192, help="window bp (default %(default)s)")
    parser.add_argument(
        "--flank", type=int, default=1024, help="bp upstream of the CDS exon (default %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")
    parser.add_argument("--max-pairs", type=int, help="keep a seeded random sample of this many")
    parser.add_argument("--assembly", help="genome_assembly column (default: FASTA file name)")
    parser.add_argument(
        "--annotation-source", help="annotation_source column (default: GTF file name)"
    )
    if parser.prog.endswith("syn"):
        parser.add_argument(
            "--optimization-rate",
            type=float,
            default=1.0,
            help="share of eligible codons to recode (default %(default)g)",
        )
        parser.add_argument(
            "--recode",
            choices=RECODINGS,
            default="most_frequent",
            help="most_frequent (default: the published recoding) or shuffle "
            "(synonymous codons permuted: the codon control)",
        )
        parser.add_argument(
            "--codon-table", help="CSV codon,amino_acid,frequency (default: python-codon-tables)"
        )
    else:
        parser.add_argument("--motif", default="CAG", help="repeat unit (default %(default)s)")
        parser.add_argument(
            "--repeats", type=int, default=10, help="copies of the unit (default %(default)s)"
        )
        parser.add_argument(
            "--allow-stop-or-frameshift",
            action="store_true",
            help="build a repeat with an in-frame stop codon or a length not a multiple of 3",
        )
        parser.add_argument(
            "--offset",
            type=int,
            default=60,
            help="bp after the first complete codon (default %(default)s)",
        )
