# Seeds of the fst_container target: small .fst files by the real fst
# (RDARROW_FST_LIB, or the repository's .fst-lib from tools/test-env.sh),
# every column type, levels 0, 30, 60 and 100, block boundaries.
args <- commandArgs(trailingOnly = TRUE)
out <- file.path(args[[1]], "fst_container")
dir.create(out, recursive = TRUE, showWarnings = FALSE)
lib <- Sys.getenv("RDARROW_FST_LIB")
if (!nzchar(lib)) stop("set RDARROW_FST_LIB to the library of fst (tools/test-env.sh builds .fst-lib)")
.libPaths(c(lib, .libPaths()))
set.seed(7)
for (n in c(1, 33, 2049, 4097)) {
  x <- data.frame(i = sample(c(1:50, NA), n, TRUE), d = c(NA, rnorm(n - 1))[seq_len(n)],
                  l = sample(c(TRUE, FALSE, NA), n, TRUE), s = sample(c("a", "\u00e9", NA), n, TRUE),
                  f = factor(sample(c("x", "y", NA), n, TRUE)), day = as.Date("2020-01-01") + seq_len(n),
                  t = as.POSIXct(1.6e9 + seq_len(n), origin = "1970-01-01", tz = "UTC"),
                  r = as.raw(seq_len(n) %% 256), stringsAsFactors = FALSE)
  for (lvl in c(0, 30, 60, 100)) fst::write_fst(x, file.path(out, sprintf("x_%d_%d.fst", n, lvl)), compress = lvl)
}
