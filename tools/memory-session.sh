#!/usr/bin/env bash
# The long memory session: R's readers and rdarrow's in turn over every
# file of the peer corpus (or the files and folders given), in one R
# process under valgrind's memcheck (tools/valgrind.sh reads its log), with
# a collection every few files; then the same session without valgrind but
# with R's collector run at every 20th allocation while rdarrow reads
# (gctorture2(20)). The short session is part of the test suite
# (tests/testthat/test-memory-session.R).
#
#   bash tools/memory-session.sh [FILE_OR_DIR ...]
#
# Default: RDARROW_PEERS_DIR, else ../shared/corpus/peers beside the
# repository. Prints valgrind's verdict (errors in rdarrow frames) and the
# sessions' summaries; exits non-zero when valgrind finds an error in
# rdarrow frames, when a session dies or when a result differs from R's.
# Takes about an hour over the whole corpus on 2 cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
if [ "$#" -eq 0 ]; then
  set -- "${RDARROW_PEERS_DIR:-$root/../shared/corpus/peers}"
fi
paths=()
for p in "$@"; do paths+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"); done
session="$root/tests/testthat/memory-session.R"
status=0
echo "==> under valgrind (tools/valgrind.sh)"
RDARROW_VG_WORKLOAD="$session" RDARROW_SESSION_ARGS="--gc-every 5 ${paths[*]}" \
  RDARROW_VG_PYARROW=0 bash tools/valgrind.sh || status=$?
echo "==> under gctorture2(20)"
Rscript --vanilla "$session" --torture 20 --gc-every 5 "${paths[@]}" || status=$?
exit "$status"
