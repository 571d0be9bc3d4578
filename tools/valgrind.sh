#!/usr/bin/env bash
# Run tools/valgrind-workload.R (every path across the Rust/R boundary, with
# small data) under valgrind memcheck and report the memory errors whose
# stack goes through rdarrow.
#
# Usage: tools/valgrind.sh [LOG]
#        tools/valgrind.sh --parse LOG    (only read an existing log again)
#
#   LOG                 where valgrind writes its log (default: a new file in
#                       ${TMPDIR:-/tmp}, kept after the run and named below);
#                       the workload's own output goes to LOG.workload.out
#                       and where rdarrow.so was mapped to LOG.maps.
#   RDARROW_VG_SUPP     suppression file to use instead of R's (if any).
#   RDARROW_VG_EXTRA    more valgrind options, e.g. "--track-origins=yes".
#   RDARROW_VG_WORKLOAD another R script to run instead of the workload (e.g.
#                       a reproduction of one crash), with the same setup.
#   RETICULATE_PYTHON   Python with pyarrow for the workload's foreign
#                       producer/consumer steps (default: .venv/bin/python of
#                       the repository, when it exists).
#   RDARROW_VG_PYARROW=0
#                       skip those steps.
#   RDARROW_VG_STACK_CACHE=0
#                       do not enlarge glibc's thread stack cache (below).
#
# Uses the rdarrow installed in R's library (it does not build or install).
# Runs
#   R -d "valgrind --error-exitcode=0 --leak-check=no --track-origins=no
#         [--suppressions=<R's file>] --num-callers=40 --fullpath-after=
#         --log-file=LOG" --vanilla -f tools/valgrind-workload.R
# then reads LOG. Counted as memory errors: "Invalid read", "Invalid write",
# anything "uninitialised" (conditional jumps, uses, syscall parameters),
# "Invalid free", "Mismatched free", and also syscall parameters pointing to
# unaddressable bytes, overlapping memcpy-like calls, fishy allocation
# sizes, jumps to invalid addresses and a crash (fatal signal: its stack is
# where the process died). An error is in rdarrow frames when any stack of
# it (the access, and the allocation/free stacks valgrind adds) has a frame
# that names rdarrow or extendr (crates rdarrow_arrow, rdarrow_r,
# extendr_api, the wrap__* entry points, source files under rdarrow-arrow/
# or rdarrow-r/) or whose address lies in rdarrow.so (the workload records
# where it is mapped). Each such error is printed with its full stacks.
#
# Prints
#   valgrind: N errors in rdarrow frames, M errors elsewhere (R/Python/system)
# (N and M count distinct error contexts, as valgrind lists them).
# Exit status: 0 when N = 0; 1 when N > 0; 2 when valgrind or the workload
# did not run to the end (or the workload found wrong results), so the
# counts cannot be trusted.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
workload=${RDARROW_VG_WORKLOAD:-$here/valgrind-workload.R}

command -v valgrind >/dev/null 2>&1 || { echo "valgrind.sh: valgrind is not installed" >&2; exit 2; }
command -v R >/dev/null 2>&1 || { echo "valgrind.sh: R is not on PATH" >&2; exit 2; }

parse_only=0
if [ "${1:-}" = "--parse" ]; then
  parse_only=1
  shift
  [ -n "${1:-}" ] || { echo "usage: tools/valgrind.sh --parse LOG" >&2; exit 2; }
fi
log=${1:-$(mktemp "${TMPDIR:-/tmp}/rdarrow-valgrind-XXXXXX.log")}
work=$(mktemp -d "${TMPDIR:-/tmp}/rdarrow-valgrind-XXXXXX")
trap 'rm -rf "$work"' EXIT
maps="$log.maps"
out="$log.workload.out"
parser="$work/parse.R"

status=0
if [ "$parse_only" -eq 0 ]; then
  # R's own suppression file, if this R ships one.
  rhome=$(R RHOME)
  supp=${RDARROW_VG_SUPP:-}
  if [ -z "$supp" ]; then
    for f in "$rhome/share/valgrind/R.supp" "$rhome/share/R/valgrind.supp" "$rhome/etc/valgrind.supp" \
             /usr/share/R/share/valgrind.supp /usr/share/R/valgrind.supp; do
      if [ -f "$f" ]; then supp=$f; break; fi
    done
    if [ -z "$supp" ]; then
      supp=$(find "$rhome" /usr/share/R -name '*.supp' 2>/dev/null | head -n 1)
    fi
  fi
  supp_opt=""
  if [ -n "$supp" ]; then
    supp_opt="--suppressions=$supp"
    echo "valgrind.sh: suppressions from $supp"
  else
    echo "valgrind.sh: R has no valgrind suppression file; using valgrind's defaults only"
  fi

  vg="valgrind --error-exitcode=0 --leak-check=no --track-origins=no $supp_opt --num-callers=40 --fullpath-after= ${RDARROW_VG_EXTRA:-} --log-file=$log"
  echo "valgrind.sh: R -d \"$vg\" --vanilla -f $workload"
  echo "valgrind.sh: log in $log"

  # Every engine call runs on a worker thread with a 1 GiB stack. glibc's
  # stack cache (40 MB by default) cannot keep such a stack, so each call
  # maps a fresh one, and memcheck then spends seconds setting up shadow
  # memory for 1 GiB: the workload would take half an hour. A 4 GiB cache
  # lets glibc reuse the stack; memcheck still marks stack memory a thread
  # has not written as undefined, so uninitialised reads are still caught.
  if [ "${RDARROW_VG_STACK_CACHE:-1}" != "0" ]; then
    export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.pthread.stack_cache_size=4294967296"
    echo "valgrind.sh: GLIBC_TUNABLES=$GLIBC_TUNABLES"
  fi

  # pyarrow steps: Python with plain malloc, so memcheck sees its blocks.
  if [ "${RDARROW_VG_PYARROW:-1}" = "0" ]; then
    export RETICULATE_PYTHON=
  elif [ -z "${RETICULATE_PYTHON:-}" ] && [ -x "$root/.venv/bin/python" ]; then
    export RETICULATE_PYTHON="$root/.venv/bin/python"
  fi
  if [ -n "${RETICULATE_PYTHON:-}" ]; then
    export PYTHONMALLOC=malloc
    echo "valgrind.sh: pyarrow steps with RETICULATE_PYTHON=$RETICULATE_PYTHON (PYTHONMALLOC=malloc)"
  fi

  start=$(date +%s)
  (cd "$root" && RDARROW_VG_MAPS="$maps" R -d "$vg" --vanilla -f "$workload" >"$out" 2>&1)
  status=$?
  end=$(date +%s)
  echo "valgrind.sh: workload exited with status $status after $((end - start)) s"
  grep -E "^(  FAIL|workload)" "$out" || true
fi

cat >"$parser" <<'EOF'
args <- commandArgs(trailingOnly = TRUE)
log <- args[[1]]
maps <- args[[2]]

lines <- readLines(log, warn = FALSE)
# Keep only valgrind's own lines (==PID==) and drop the prefix.
vg <- grepl("^==[0-9]+== ?", lines)
body <- sub("^==[0-9]+== ?", "", lines[vg])

# Address ranges of rdarrow.so, from /proc/self/maps inside the run.
ranges <- matrix(numeric(), ncol = 2)
if (file.exists(maps)) {
  m <- readLines(maps, warn = FALSE)
  m <- m[grepl("rdarrow[^/]*\\.so", m)]
  if (length(m)) {
    r <- do.call(rbind, strsplit(sub(" .*", "", m), "-", fixed = TRUE))
    hex <- function(h) {
      # exact enough for addresses < 2^53
      v <- 0
      for (ch in strsplit(tolower(h), "")[[1]]) v <- v * 16 + match(ch, c(0:9, letters[1:6])) - 1
      v
    }
    ranges <- cbind(vapply(r[, 1], hex, 0), vapply(r[, 2], hex, 0))
  }
}
in_rdarrow_so <- function(addr_hex) {
  if (!nrow(ranges) || is.na(addr_hex)) return(FALSE)
  a <- 0
  for (ch in strsplit(tolower(addr_hex), "")[[1]]) a <- a * 16 + match(ch, c(0:9, letters[1:6])) - 1
  any(a >= ranges[, 1] & a < ranges[, 2])
}

frame_re <- "^ +(at|by) 0x([0-9A-Fa-f]+): "
name_re <- "rdarrow|extendr|wrap__|rdarrow-arrow/|rdarrow-r/"
frame_is_rdarrow <- function(l) {
  if (!grepl(frame_re, l)) return(FALSE)
  if (grepl(name_re, l, ignore.case = TRUE)) return(TRUE)
  in_rdarrow_so(sub(paste0(frame_re, ".*"), "\\2", l))
}

# Blocks: a block starts at each line that is not indented (an error
# header, a "Thread N:" line, a warning) and runs to the next such line or
# blank line; stack frames and the " Address ..."/" Block was alloc'd at"
# lines of an error are indented.
blank <- !nzchar(trimws(body))
starts <- !blank & !grepl("^ ", body)
id <- cumsum(starts | blank)
blocks <- split(body[!blank], id[!blank])

kinds <- c(
  "Invalid read" = "^Invalid read of size",
  "Invalid write" = "^Invalid write of size",
  "uninitialised" = "uninitiali[sz]ed",
  "Invalid free" = "^Invalid (free|delete|realloc)",
  "Mismatched free" = "^Mismatched (free|delete)",
  "unaddressable syscall param" = "^Syscall param .* unaddressable",
  "overlap" = "^Source and destination overlap",
  "fishy size" = "^Argument .* fishy",
  "invalid jump" = "^Jump to the invalid address",
  "fatal signal" = "^Process terminating with default action of signal"
)

found <- list()
thread <- ""
for (b in blocks) {
  if (grepl("^Thread [0-9]+", b[1])) {
    thread <- b[1]
    next
  }
  kind <- names(kinds)[vapply(kinds, function(re) grepl(re, b[1]), TRUE)]
  if (!length(kind)) next
  if (!any(grepl(frame_re, b))) next
  ours <- any(vapply(b, frame_is_rdarrow, TRUE))
  found[[length(found) + 1L]] <- list(kind = kind[1], ours = ours, thread = thread, text = b)
}

ours <- Filter(function(e) e$ours, found)
other <- Filter(function(e) !e$ours, found)
by_kind <- function(es) {
  if (!length(es)) return("none")
  t <- table(vapply(es, function(e) e$kind, ""))
  paste(sprintf("%s %d", names(t), as.integer(t)), collapse = ", ")
}

if (length(ours)) {
  cat("\n==== memory errors in rdarrow frames ====\n")
  for (i in seq_along(ours)) {
    e <- ours[[i]]
    cat(sprintf("\n--- rdarrow error %d of %d: %s%s\n", i, length(ours), e$kind,
                if (nzchar(e$thread)) paste0(" (", e$thread, ")") else ""))
    cat(e$text, sep = "\n")
  }
  cat("\n")
}
if (length(other)) {
  cat("\n==== first lines of the other memory errors (full stacks in the log) ====\n")
  for (e in other) cat(sprintf("  %s | %s\n", e$text[1], sub("^ +", "", e$text[2])))
}

summary_line <- grep("^ERROR SUMMARY:", body, value = TRUE)
cat(sprintf("valgrind's own count: %s\n", if (length(summary_line)) summary_line[length(summary_line)] else "(none: valgrind did not finish)"))
cat(sprintf("rdarrow frames by kind: %s\n", by_kind(ours)))
cat(sprintf("elsewhere by kind: %s\n", by_kind(other)))
if (!nrow(ranges)) cat("note: rdarrow.so's address range was not recorded; frames attributed by name only\n")
cat(sprintf("valgrind: %d errors in rdarrow frames, %d errors elsewhere (R/Python/system)\n",
            length(ours), length(other)))
quit(save = "no", status = if (!length(summary_line)) 2L else if (length(ours)) 1L else 0L)
EOF

if [ ! -s "$log" ]; then
  echo "valgrind.sh: no valgrind log at $log; workload output:" >&2
  tail -n 40 "$out" >&2
  exit 2
fi

Rscript --vanilla "$parser" "$log" "$maps"
pstatus=$?
if [ "$status" -ne 0 ]; then
  echo "valgrind.sh: the workload did not finish cleanly (status $status); last lines of its output:" >&2
  tail -n 25 "$out" >&2
  [ "$pstatus" -eq 1 ] && exit 1
  exit 2
fi
exit "$pstatus"
