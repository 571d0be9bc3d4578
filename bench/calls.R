# Small calls and the cost of checking, against R's own and qs2's in the
# same run.
#
#   Rscript bench/calls.R            # 5 repetitions, the median reported
#   Rscript bench/calls.R --reps 9
#
# Small calls: 200 write_rds() of a small data frame to .rds, .qs2 and
# .qdata against saveRDS(), qs2::qs_save() and qs2::qd_save(); 1,000
# read_rds() of a small .qs2 file against qs2::qs_read(); 300 read_rds()
# of mtcars against readRDS(). qs2 comes from the library set-up builds
# (RDARROW_QS_LIB); without it those rows are left out, said so.
# Target: each at most 1.5x its anchor (mtcars 1.2x).
#
# Checking: read_rds() of a 5-million-row data frame saved gzip by
# saveRDS() (every check its compression carries made: the CRC-32 and
# length at the end of the stream) against the decompression alone
# (the engine's decompressor, which computes the same CRC as it inflates),
# and against readRDS() (which checks nothing it does not read).

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
reps <- bench_opt("reps", 5)
suppressPackageStartupMessages(library(rdarrow))

qs_lib <- Sys.getenv("RDARROW_QS_LIB")
has_qs2 <- nzchar(qs_lib) && dir.exists(file.path(qs_lib, "qs2"))
if (has_qs2) {
  .libPaths(c(qs_lib, .libPaths()))
  qs2 <- asNamespace(loadNamespace("qs2"))
} else {
  message("qs2 is not built (RDARROW_QS_LIB): the .qs2 and .qdata rows are left out")
}

dir <- tempfile("rdarrow-calls-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
small <- bench_frame(50)
f <- function(ext) file.path(dir, paste0("small", ext))

# the median over `reps` of the seconds `n` calls of `call` take
median_time <- function(call, n) {
  median(vapply(seq_len(reps), function(r) {
    time_once(function() for (i in seq_len(n)) call())
  }, 0))
}

rows <- list()
row <- function(what, n, ours, anchor, anchor_name, target) {
  a <- median_time(anchor, n)
  o <- median_time(ours, n)
  rows[[length(rows) + 1L]] <<- data.frame(
    calls = what, n = n, anchor = anchor_name, anchor_s = round(a, 3),
    rdarrow_s = round(o, 3), ratio = round(o / a, 2), target = target
  )
}

row("write_rds(small, .rds)", 200, function() write_rds(small, f(".rds")),
    function() saveRDS(small, f(".rds")), "saveRDS()", 1.5)
if (has_qs2) {
  row("write_rds(small, .qs2)", 200, function() write_rds(small, f(".qs2")),
      function() qs2$qs_save(small, f(".qs2")), "qs_save()", 1.5)
  row("write_rds(small, .qdata)", 200, function() write_rds(small, f(".qdata")),
      function() qs2$qd_save(small, f(".qdata")), "qd_save()", 1.5)
  qs2$qs_save(small, f("-read.qs2"))
  row("read_rds(small .qs2)", 1000, function() read_rds(f("-read.qs2")),
      function() qs2$qs_read(f("-read.qs2")), "qs_read()", 1.5)
}
saveRDS(mtcars, f("-mtcars.rds"))
row("read_rds(mtcars)", 300, function() read_rds(f("-mtcars.rds")),
    function() readRDS(f("-mtcars.rds")), "readRDS()", 1.2)
# the same writes in memory (/dev/shm, a tmpfs: fsync costs nothing), to
# show what the durable write's fsync costs on the disk above
shm <- "/dev/shm"
if (dir.exists(shm) && file.access(shm, 2) == 0) {
  mem <- tempfile("rdarrow-calls-", tmpdir = shm)
  dir.create(mem)
  on.exit(unlink(mem, recursive = TRUE), add = TRUE)
  m <- function(ext) file.path(mem, paste0("small", ext))
  row("write_rds(small, .rds) in memory", 200, function() write_rds(small, m(".rds")),
      function() saveRDS(small, m(".rds")), "saveRDS()", 1.5)
  if (has_qs2) {
    row("write_rds(small, .qs2) in memory", 200, function() write_rds(small, m(".qs2")),
        function() qs2$qs_save(small, m(".qs2")), "qs_save()", 1.5)
    row("write_rds(small, .qdata) in memory", 200, function() write_rds(small, m(".qdata")),
        function() qs2$qd_save(small, m(".qdata")), "qd_save()", 1.5)
  }
}
calls <- do.call(rbind, rows)
cat("\nSmall calls (median of", reps, "repetitions; ratio = rdarrow / anchor):\n")
print(calls, row.names = FALSE)

# Listing: every file of the peer corpus (RDARROW_PEERS_DIR, default
# ../shared/corpus/peers) listed one call a file, against reading each
# with load() or readRDS(); and the engine's decompression of each alone,
# the floor a listing that checks every checksum cannot go under.
peers <- Sys.getenv("RDARROW_PEERS_DIR", file.path(script_dir, "..", "..", "shared", "corpus", "peers"))
files <- list.files(peers, pattern = "\\.(rda|rdata|rds)$", full.names = TRUE, recursive = TRUE,
                    ignore.case = TRUE)
if (length(files)) {
  base_read <- function(f) {
    if (grepl("\\.rds$", f, ignore.case = TRUE)) try(readRDS(f), silent = TRUE) else try(load(f, envir = new.env()), silent = TRUE)
  }
  reps <- max(3, reps)
  lst <- median_time(function() for (f in files) try(rdata_objects(f), silent = TRUE), 1)
  ld <- median_time(function() for (f in files) base_read(f), 1)
  all <- median_time(function() try(rdata_objects(files), silent = TRUE), 1)
  dc <- median_time(function() for (f in files) try(rdarrow:::rdata_decompress_impl(f), silent = TRUE), 1)
  cat("\nListing the ", length(files), " files of the peer corpus, one call a file (median of ", reps, "):\n", sep = "")
  print(data.frame(
    what = c("load() / readRDS() of each", "rdata_objects(files), one call (target <= 0.3x)",
             "rdata_objects() of each, a call a file", "decompression alone of each, a call a file"),
    seconds = round(c(ld, all, lst, dc), 3),
    ratio = round(c(ld, all, lst, dc) / ld, 2)
  ), row.names = FALSE)
} else {
  message("the peer corpus is not at ", peers, " (RDARROW_PEERS_DIR): the listing rows are left out")
}

big <- file.path(dir, "big.rds")
local({
  set.seed(1)
  n <- 5e6
  saveRDS(data.frame(id = seq_len(n), x = rnorm(n),
                     g = factor(sample(letters, n, TRUE))), big)
})
reps <- max(3, reps %/% 2)
dec <- median_time(function() rdarrow:::rdata_decompress_impl(big), 1)
rd <- median_time(function() read_rds(big), 1)
base <- median_time(function() readRDS(big), 1)
cat("\nChecking (a 5-million-row data frame, saveRDS() gzip, ", round(file.size(big) / 1e6, 1),
    " MB; median of ", reps, "):\n", sep = "")
print(data.frame(
  what = c("decompression alone (CRC computed, as every inflate does)",
           "read_rds(), the CRC-32 and length checked", "readRDS()"),
  seconds = round(c(dec, rd, base), 3),
  ratio_to_readRDS = round(c(dec, rd, base) / base, 2)
), row.names = FALSE)
