# The cost of the trust rule (no promise outside an environment's frame;
# data only with trusted = FALSE): read_rds() against readRDS() on the
# files it costs most on (many nodes) and least (a few long vectors), with
# the default rule and with trusted = FALSE, in the same run.
#
#   Rscript bench/trust.R               # 5 repetitions
#   Rscript bench/trust.R --reps 9
#   RDARROW_BEFORE_LIB=/path/to/lib Rscript bench/trust.R
#
# With RDARROW_BEFORE_LIB (a library holding an rdarrow built without the
# rule), its read_rds() is timed in the same run too, in a child process
# per file (one R session cannot load two builds of a package), and the
# table gives after/before.

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
reps <- bench_opt("reps", 5)
suppressPackageStartupMessages(library(rdarrow))
before_lib <- Sys.getenv("RDARROW_BEFORE_LIB")
cat(sprintf("rdarrow %s, R %s, %d repetitions, load average %s\n", packageVersion("rdarrow"),
            getRversion(), reps, load_avg()))

dir <- tempfile("rdarrow-trust-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
set.seed(1)
n <- 2e5
files <- c(
  # one node per element: the walk's worst case against the payload
  nodes = {
    x <- lapply(seq_len(n), function(i) c(a = i, b = i / 2))
    names(x) <- paste0("e", seq_len(n))
    f <- file.path(dir, "nodes.rds"); saveRDS(x, f, compress = FALSE); f
  },
  # a data frame of long vectors: a handful of nodes
  frame = {
    f <- file.path(dir, "frame.rds")
    saveRDS(data.frame(i = seq_len(5e6), d = runif(5e6), l = rep(c(TRUE, NA), 2.5e6)), f, compress = FALSE)
    f
  },
  # closures whose environments hold promises (the rule's allowed place)
  closures = {
    adder <- function(n) function(x) x + n
    f <- file.path(dir, "closures.rds"); saveRDS(lapply(seq_len(2e4), function(i) adder(i)), f, compress = FALSE); f
  }
)

median_of <- function(f) median(vapply(seq_len(reps), function(i) time_once(f), 0))

# read_rds() of `path` by the build in `lib`, timed in a child: the median
before_time <- function(path) {
  code <- sprintf(
    'suppressPackageStartupMessages(library(rdarrow, lib.loc = "%s")); t <- vapply(1:%d, function(i) { invisible(gc(full = TRUE)); system.time(rdarrow::read_rds("%s"), gcFirst = FALSE)[["elapsed"]] }, 0); cat(median(t))',
    before_lib, reps, path)
  as.numeric(system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE))
}

rows <- list()
for (k in names(files)) {
  f <- files[[k]]
  base <- median_of(function() readRDS(f))
  ours <- median_of(function() read_rds(f))
  data_only <- if (k == "closures") NA else median_of(function() read_rds(f, trusted = FALSE))
  before <- if (nzchar(before_lib)) before_time(f) else NA
  rows[[k]] <- data.frame(file = k, readRDS = base, read_rds = ours, ratio = ours / base,
                          trusted_false = data_only, ratio_false = data_only / base,
                          before = before, after_over_before = ours / before)
}
res <- do.call(rbind, rows)
rownames(res) <- NULL
print(format(res, digits = 3), row.names = FALSE)
cat(sprintf("load average after: %s\n", load_avg()))
