#!/bin/sh
# Runs one fuzz campaign: sh run_campaign.sh <target> [seconds] [extra libFuzzer flags]
# Corpus: fuzz/corpus/<target> (grows), seeded from fuzz/seeds/<target>
# (make_seeds.sh). Crashes go to fuzz/artifacts/<target>/. Log: fuzz/logs/<target>.log
set -eu
here=$(cd "$(dirname "$0")" && pwd)
t=$1
secs=${2:-1800}
shift; [ $# -gt 0 ] && shift
case "$t" in
  ipc_to_rdata) maxlen=16384 ;;
  structure_checks) maxlen=327680 ;;  # a whole Seurat object among the seeds
  *) maxlen=65536 ;;
esac
dict=""
case "$t" in rdata_* | structure_*) dict="-dict=$here/rdata.dict" ;; esac
mkdir -p "$here/corpus/$t" "$here/logs"
cd "$here/.."
RUSTC_BOOTSTRAP=1 nice cargo fuzz run --fuzz-dir fuzz "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
  -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len="$maxlen" \
  -print_final_stats=1 $dict "$@" 2>&1 | tee "$here/logs/$t.log" | grep -E "INITED|DONE|ERROR|panicked|SUMMARY|artifact_prefix|Test unit|stat::" || true
