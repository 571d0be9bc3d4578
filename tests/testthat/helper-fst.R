# The real fst 0.9.8 and fstcore 0.10.0, built by tools/test-env.sh from
# ../shared/fst into .fst-lib (RDARROW_FST_LIB): the tests of .fst files
# make their files with fst and read rdarrow's back with it. A skip where
# fst is not built; a failure where the suite requires it
# (RDARROW_REQUIRE_FST=1, as tools/test.sh sets it).
fst_lib <- function() {
  lib <- Sys.getenv("RDARROW_FST_LIB")
  if (nzchar(lib) && dir.exists(file.path(lib, "fst"))) return(lib)
  why <- "fst is not built (tools/test-env.sh builds it from ../shared/fst into .fst-lib)"
  if (identical(Sys.getenv("RDARROW_REQUIRE_FST"), "1")) stop(why, call. = FALSE)
  testthat::skip(why)
}

# fst's namespace, loaded from that library.
fst_pkg <- function() {
  lib <- fst_lib()
  if (!lib %in% .libPaths()) .libPaths(c(lib, .libPaths()))
  # (named by a variable: a test-only package, outside DESCRIPTION, built
  # by set-up from ../shared/fst)
  pkg <- c(fst = "fst")
  asNamespace(loadNamespace(pkg[["fst"]]))
}

# A data frame of `n` rows with a column of every type fst stores:
# integer, double and logical with NA, strings (UTF-8, NA, long), factor
# and ordered factor (with NA), Date (double and integer), POSIXct (UTC,
# a zone, none; fractional seconds), difftime (double and integer, two
# units), raw; with bit64 and data.table, integer64, ITime and IDate.
fst_frame <- function(n, seed = n) {
  set.seed(seed)
  x <- data.frame(
    i = sample(c(1:1000, NA, -.Machine$integer.max), n, TRUE),
    d = c(rnorm(n - 1), NA)[seq_len(n)],
    l = sample(c(TRUE, FALSE, NA), n, TRUE),
    s = sample(c("a", "caf\u00e9", NA, "zzz", strrep("x", 300), ""), n, TRUE),
    f = factor(sample(c("lo", "mid", "hi", NA), n, TRUE), levels = c("lo", "mid", "hi")),
    o = factor(sample(letters, n, TRUE), levels = letters, ordered = TRUE),
    date = as.Date("2020-01-01") + sample(-100:100, n, TRUE),
    date_int = structure(sample(1:20000, n, TRUE), class = "Date"),
    ct = as.POSIXct("2020-01-01", tz = "UTC") + runif(n, 0, 1e8),
    ct_zone = as.POSIXct(1.5e9 + seq_len(n), origin = "1970-01-01", tz = "Europe/Paris"),
    ct_none = structure(1.5e9 + seq_len(n) * 0.25, class = c("POSIXct", "POSIXt")),
    ct_int = structure(1500000000L + seq_len(n), class = c("POSIXct", "POSIXt"), tzone = "UTC"),
    mins = as.difftime(seq_len(n) * 1.5, units = "mins"),
    hours = structure(seq_len(n), class = "difftime", units = "hours"),
    r = as.raw(sample(0:255, n, TRUE)),
    stringsAsFactors = FALSE
  )
  if (requireNamespace("bit64", quietly = TRUE)) {
    x$i64 <- bit64::as.integer64(sample(c(1, -2, NA, 2^40, 2^62), n, TRUE))
  }
  if (requireNamespace("data.table", quietly = TRUE)) {
    x$itime <- data.table::as.ITime(sample(c(0L, 3600L, NA, 86399L), n, TRUE))
    x$idate <- data.table::as.IDate(as.Date("2000-01-01") + sample(c(0:9, NA), n, TRUE))
  }
  x
}
