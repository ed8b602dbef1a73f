#!/usr/bin/env bash
# Fetch real S. cerevisiae chrI + chrII sequences and SGD's GFF3 for them, offline-friendly:
# the Debian package gbrowse-data (1.2 MB) ships them; it is downloaded and unpacked, not
# installed (no GBrowse). Usage: bash scripts/fetch_yeast.sh [DEST]  (default: .yeast)
# Leaves DEST/chr1.fa, DEST/chr2.fa and DEST/yeast_chr1+2.gff3.
set -euo pipefail
dest=${1:-.yeast}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download -qq gbrowse-data 2>/dev/null || { apt-get update -qq && apt-get download -qq gbrowse-data; }
dpkg -x gbrowse-data_*.deb root
cd - >/dev/null
databases="$work/root/var/lib/gbrowse/databases"
mkdir -p "$dest"
cp "$databases/yeast_scaffolds/chr1.fa" "$databases/yeast_scaffolds/chr2.fa" \
   "$databases/yeast_chr1+2/yeast_chr1+2.gff3" "$dest/"
echo "yeast chrI + chrII and SGD GFF3 in $dest"
