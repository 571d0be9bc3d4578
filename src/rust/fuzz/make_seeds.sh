#!/bin/sh
# Builds the seed corpora of the fuzz targets into fuzz/seeds/<target>/
# (not committed: the peer fixtures are third-party files, some AGPL).
#   rdata_parse, rdata_to_arrow: every data file of /work/shared/corpus/peers,
#     R files written by seedgen/make_r_seeds.R (save()/saveRDS() of data
#     frames, lists, closures, byte code, environments, ALTREP, S4 in XDR,
#     ASCII and binary, versions 2 and 3, none/gzip/bzip2/xz), plus zstd,
#     lzma-alone and lazy-load (zlib) copies of some of them.
#   structure_checks: the R files above, and single-cell objects
#     (seedgen/make_structure_seeds.R: Seurat, SingleCellExperiment, sparse
#     matrices of every storage, factors, named and labelled matrices),
#     uncompressed so that mutations reach their slots.
#   ipc_to_rdata: Arrow IPC files and streams from seedgen/make_ipc_seeds.py
#     (pyarrow), including arrow R "r" schema metadata.
#   tensor_message: Arrow Tensor messages from seedgen/make_tensor_seeds.py
#     (pyarrow's, every numeric type and layout; rdarrow's of R arrays).
#   fst_container: .fst files of fst (RDARROW_FST_LIB, or the repository's
#     .fst-lib);
#   qs_formats, qs_encoding, qdata_encoding: .qs, .qs2 and .qdata files of
#     every preset, level and shuffle made by the real qs and qs2
#     (seedgen/make_qs_seeds.R, with RDARROW_QS_LIB or the repository's
#     .qs-lib), and their decompressed streams and payloads
#     (seedgen/make_qdata_payloads.py).
#   trust_rule: the uncompressed R files above, and files holding promises,
#     closures, active bindings, byte code and namespace references
#     (seedgen/make_trust_seeds.R, crafted by the R tests' own helper).
# Usage: sh make_seeds.sh [PEERS_DIR] [PYTHON]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
peers=${1:-/work/shared/corpus/peers}
python=${2:-/work/main/.venv/bin/python}
seeds=$here/seeds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rm -rf "$seeds"
mkdir -p "$seeds/rdata_parse" "$seeds/rdata_to_arrow" "$seeds/ipc_to_rdata" "$seeds/structure_checks" "$seeds/trust_rule" "$seeds/tensor_message"
# qs and qs2's files, made by the real packages
RDARROW_QS_LIB="${RDARROW_QS_LIB:-$here/../../../.qs-lib}" Rscript "$here/seedgen/make_qs_seeds.R" "$seeds"
"$python" "$here/seedgen/make_qdata_payloads.py" "$seeds"
# fst's files, made by the real package
RDARROW_FST_LIB="${RDARROW_FST_LIB:-$here/../../../.fst-lib}" Rscript "$here/seedgen/make_fst_seeds.R" "$seeds"

# peer fixtures (data files only), flattened to unique names
if [ -d "$peers" ]; then
  (cd "$peers" && find . -type f ! -iname '*.md' ! -iname '*.csv' ! -iname '*.txt' \
      ! -iname 'LICENSE*' ! -iname 'README*') | while read -r f; do
    name=$(printf '%s' "${f#./}" | tr '/ ' '__')
    cp "$peers/$f" "$seeds/rdata_parse/peer_$name"
  done
fi

# R-written files
Rscript "$here/seedgen/make_r_seeds.R" "$tmp/r" >/dev/null 2>&1
cp "$tmp"/r/* "$seeds/rdata_parse/"

# other envelopes: zstd, lzma-alone, lazy-load zlib entry (4-byte length + zlib)
for f in "$tmp"/r/*_none.rd? ; do
  b=$(basename "$f")
  case "$b" in *df*|*lst*|save_v3_xdr*|save_v2_ascii*|*alt_str*|*_g_*) ;; *) continue ;; esac
  zstd -q -19 -c "$f" > "$seeds/rdata_parse/zstd_$b"
  xz --format=lzma -c "$f" > "$seeds/rdata_parse/lzma_$b"
  "$python" -c 'import sys,zlib,struct; d=open(sys.argv[1],"rb").read(); open(sys.argv[2],"wb").write(struct.pack(">I",len(d))+zlib.compress(d))' \
    "$f" "$seeds/rdata_parse/rdb_$b"
done
cp "$seeds"/rdata_parse/* "$seeds/rdata_to_arrow/"
cp "$tmp"/r/*_none.rd? "$seeds/structure_checks/"
Rscript "$here/seedgen/make_structure_seeds.R" "$seeds/structure_checks" >/dev/null 2>&1

cp "$tmp"/r/*_none.rd? "$seeds/trust_rule/"
Rscript "$here/seedgen/make_trust_seeds.R" "$seeds/trust_rule" >/dev/null 2>&1

# Arrow IPC
"$python" "$here/seedgen/make_ipc_seeds.py" "$seeds/ipc_to_rdata" "$tmp/r_metadata_ascii.txt" "$tmp/r_metadata_gz.txt" >/dev/null
Rscript -e 'out <- commandArgs(TRUE)[1]; dir.create(out, showWarnings = FALSE)
  x <- list(volcano = volcano, titanic = Titanic, iris3 = iris3, tab = table(mtcars$cyl, mtcars$gear),
    lgl = matrix(c(TRUE, NA, FALSE, TRUE), 2), cplx = matrix(complex(real = 1:4, imaginary = c(NA, 2:4)), 2),
    raw = array(as.raw(1:24), 2:4), named = array(1:24, 2:4, dimnames = list(a = NULL, b = NULL, c = letters[1:4])))
  for (n in names(x)) saveRDS(x[[n]], file.path(out, paste0(n, ".rds")), compress = FALSE)' "$tmp/arrays"
"$python" "$here/seedgen/make_tensor_seeds.py" "$seeds/tensor_message" "$tmp"/arrays/*.rds >/dev/null

for t in rdata_parse rdata_to_arrow ipc_to_rdata structure_checks trust_rule tensor_message; do
  echo "$t: $(ls "$seeds/$t" | wc -l) files, $(du -sk "$seeds/$t" | cut -f1) KiB"
done
