# The real qs 0.27.3 and qs2 0.2.1, built by tools/test-env.sh from
# ../shared/qs into .qs-lib (RDARROW_QS_LIB): the tests of .qs, .qs2 and
# .qdata files make their files with them and read rdarrow's back with
# them. A skip where they are not built; a failure where the suite
# requires them (RDARROW_REQUIRE_QS=1, as tools/test.sh sets it).
qs_lib <- function() {
  lib <- Sys.getenv("RDARROW_QS_LIB")
  if (nzchar(lib) && dir.exists(file.path(lib, "qs2"))) return(lib)
  why <- "qs and qs2 are not built (tools/test-env.sh builds them from ../shared/qs into .qs-lib)"
  if (identical(Sys.getenv("RDARROW_REQUIRE_QS"), "1")) stop(why, call. = FALSE)
  testthat::skip(why)
}

# The namespaces of qs and qs2, loaded from that library.
qs_pkgs <- function() {
  lib <- qs_lib()
  if (!lib %in% .libPaths()) .libPaths(c(lib, .libPaths()))
  # (named by a variable: test-only packages, outside DESCRIPTION, built
  # by set-up from ../shared/qs)
  pkgs <- c(qs = "qs", qs2 = "qs2", stringfish = "stringfish")
  lapply(pkgs, function(p) asNamespace(loadNamespace(p)))
}

# Objects of every type the formats hold: atomic vectors with NA, factors,
# dates and times, data frames, matrices, nested lists, strings in every
# encoding; `full` adds what only R's serialization holds (S4 objects,
# environments, functions, formulas), for qs and qs2.
qs_objects <- function(full = TRUE) {
  latin <- "caf\xe9"
  Encoding(latin) <- "latin1"
  utf8 <- enc2utf8("\u65e5\u672c \u00e9")
  out <- list(
    lgl = c(TRUE, NA, FALSE),
    int = c(1L, NA, -5L, .Machine$integer.max),
    dbl = c(1.5, NA, -Inf, Inf, NaN, 0),
    cplx = complex(real = c(1, NA, 3), imaginary = c(-1, 2, NA)),
    raw = as.raw(c(0, 1, 255)),
    chr = c("a", NA, "", utf8, latin),
    na_chr = NA_character_,
    fac = factor(c("lo", "hi", NA, "lo"), levels = c("lo", "hi", "none")),
    ord = factor(c("b", "a"), levels = c("a", "b"), ordered = TRUE),
    date = as.Date(c("2024-02-29", NA)),
    time = as.POSIXct(c("2024-01-02 03:04:05", NA), tz = "Europe/Paris"),
    df = data.frame(i = c(NA, 2L), d = c(0.5, NA), s = c("x", NA), stringsAsFactors = FALSE),
    mat = matrix(1:6, 2, dimnames = list(c("r1", "r2"), c("a", "b", "c"))),
    arr = array(as.double(1:24), c(2, 3, 4)),
    nested = list(a = list(b = list(c = 1:3, d = NULL)), e = list()),
    empty = character(0),
    null = NULL,
    long_strings = sprintf("s%07d", seq_len(5000)),
    named = c(x = 1, y = 2)
  )
  if (requireNamespace("data.table", quietly = TRUE)) {
    out$dt <- data.table::data.table(a = 1:3, b = c("x", "y", NA))
  }
  if (requireNamespace("tibble", quietly = TRUE)) {
    out$tbl <- tibble::tibble(a = 1:2, b = list(1, "x"))
  }
  if (full) {
    setClass("QsPoint", representation(x = "numeric", label = "character"), where = globalenv())
    env <- new.env(parent = globalenv())
    assign("v", 1:3, envir = env)
    out$s4 <- methods::new("QsPoint", x = c(1, 2), label = "p")
    out$env <- env
    out$env_again <- env
    out$fun <- function(x, y = 2) x + y
    out$formula <- y ~ x + log(z)
    out$call <- quote(f(a, b = 2))
    out$sym <- as.name("a_symbol")
    out$expr <- expression(1 + 2, x)
    out$missing_arg <- formals(function(x) NULL)
    bytes <- "\xff\x01 raw"
    Encoding(bytes) <- "bytes"
    out$bytes <- bytes
  }
  out
}
