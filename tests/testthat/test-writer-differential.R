# The native writer against R's own: arrow_to_rdata() of a data frame lays
# out the bytes itself (save_native.rs), so uncompressed it must give
# exactly the bytes of save()/saveRDS() of the same frame, for version 2
# and 3, and load()/readRDS() must give the frame back.
#
# Every data frame of the peer corpus (RDARROW_PEERS_DIR, see
# test-peers.R), then frames built here that carry unusual things in their
# attributes and columns.

# ---- the comparison --------------------------------------------------------

# Where two byte vectors first differ, for messages.
wd_first_difference <- function(a, b) {
  n <- min(length(a), length(b))
  at <- which(a[seq_len(n)] != b[seq_len(n)])[1L]
  if (is.na(at)) n + 1L else at
}

# Run `expr` with its warnings muffled; errors are returned as conditions.
wd_quietly <- function(expr) {
  tryCatch(
    withCallingHandlers(expr, warning = function(w) invokeRestart("muffleWarning")),
    error = function(e) e
  )
}

# Run a write: errors are returned as conditions, warnings collected in
# attribute "warnings", except the one save() gives for a package
# environment ("may not be available when loading"), expected here.
wd_write <- function(expr) {
  warnings <- character()
  value <- tryCatch(
    withCallingHandlers(expr, warning = function(w) {
      if (!grepl("may not be available when loading", conditionMessage(w))) {
        warnings <<- c(warnings, conditionMessage(w))
      }
      invokeRestart("muffleWarning")
    }),
    error = function(e) e
  )
  if (!inherits(value, "error")) value <- structure(list(), warnings = warnings)
  value
}

# Write `df` with arrow_to_rdata() and with R (save() as "df" for .RData,
# saveRDS() for .rds), uncompressed, in `version`; compare the bytes, then
# read arrow_to_rdata()'s file with load()/readRDS() and compare with `df`
# (identical(), or serialize() when `df` holds environments; see
# compare_objects() in helper-roundtrip.R). Returns the problems found, as
# strings ("<route> v<version>: ..."); none when all is well.
wd_problems <- function(df, version, dir, routes = c("rdata", "rds")) {
  problems <- character()
  add <- function(route, ...) {
    problems <<- c(problems, sprintf("%s v%d: %s", route, version, sprintf(...)))
  }
  for (route in routes) {
    ext <- if (route == "rdata") ".RData" else ".rds"
    ours <- file.path(dir, paste0("native", ext))
    theirs <- file.path(dir, paste0("r", ext))
    unlink(c(ours, theirs))
    # R's writer first: arrow_to_rdata() must write what save() writes of
    # the object as it is (some ALTREP objects, once expanded, are written
    # as ordinary vectors)
    r <- wd_write(if (route == "rdata") {
      save(df, file = theirs, compress = FALSE, version = version)
    } else {
      saveRDS(df, theirs, compress = FALSE, version = version)
    })
    if (inherits(r, "error")) {
      add(route, "R's own writer failed: %s", conditionMessage(r))
      next
    }
    w <- wd_write(arrow_to_rdata(df, ours, name = "df", compress = "none",
                                 version = version))
    if (inherits(w, "error")) {
      add(route, "arrow_to_rdata() failed: %s", conditionMessage(w))
      next
    }
    extra <- setdiff(attr(w, "warnings"), attr(r, "warnings"))
    if (length(extra)) {
      add(route, "arrow_to_rdata() warns where R does not: %s", paste(extra, collapse = "; "))
    }
    a <- file_bytes(ours)
    b <- file_bytes(theirs)
    if (!identical(a, b)) {
      add(route, "bytes differ from %s (%d vs %d bytes, first difference at byte %d)",
          if (route == "rdata") "save()" else "saveRDS()",
          length(a), length(b), wd_first_difference(a, b) - 1L)
    }
    back <- wd_quietly(if (route == "rdata") load_objects(ours) else list(df = readRDS(ours)))
    if (inherits(back, "error")) {
      add(route, "%s of arrow_to_rdata()'s file failed: %s",
          if (route == "rdata") "load()" else "readRDS()", conditionMessage(back))
      next
    }
    if (!identical(names(back), "df")) {
      add(route, "load() gives objects [%s], not [df]", paste(names(back), collapse = ", "))
      next
    }
    p <- compare_objects(back$df, df)
    if (!is.null(p)) add(route, "read back: %s", p)
  }
  problems
}

# One expectation for a frame in both versions, labelled `label`.
expect_writes_like_r <- function(df, label, dir, versions = c(3L, 2L)) {
  problems <- unlist(lapply(versions, function(v) wd_problems(df, v, dir)))
  expect(length(problems) == 0L,
         sprintf("%s:\n%s", label, paste0("  ", problems, collapse = "\n")))
  invisible(problems)
}

# ---- the peer corpus -------------------------------------------------------

# The corpus folder: RDARROW_PEERS_DIR (tools/test.sh sets it), else
# ../shared/corpus/peers beside the repository, as tools/test.sh defaults
# it. A folder named by the variable that does not exist is an error, not a
# skip.
wd_peers_dir <- function() {
  dir <- Sys.getenv("RDARROW_PEERS_DIR")
  if (nzchar(dir)) {
    if (!dir.exists(dir)) stop(sprintf("RDARROW_PEERS_DIR=%s is not a folder", dir))
    return(normalizePath(dir))
  }
  beside <- file.path(testthat::test_path(), "..", "..", "..", "shared", "corpus", "peers")
  if (!dir.exists(beside)) {
    skip(sprintf("the peer corpus is not available: RDARROW_PEERS_DIR is not set and %s does not exist",
                 normalizePath(beside, mustWork = FALSE)))
  }
  normalizePath(beside)
}

# Every data frame R itself reads from the corpus's .rda/.RData/.rdata/
# .rds/.Rds files: list(label = "<file> [<object>]", df). Files R cannot
# read (or whose objects need packages that are not installed) are left
# out, each on its own.
wd_peer_frames <- function(dir) {
  files <- sort(list.files(dir, pattern = "\\.(rda|rdata|rds)$", ignore.case = TRUE,
                           recursive = TRUE, full.names = TRUE))
  frames <- list()
  for (path in files) {
    label <- substring(path, nchar(dir) + 2L)
    objs <- suppressMessages(wd_quietly(
      if (grepl("\\.rds$", path, ignore.case = TRUE)) {
        list(readRDS(path))
      } else {
        load_objects(path)
      }
    ))
    if (inherits(objs, "error")) next
    for (k in seq_along(objs)) {
      o <- objs[[k]]
      # is.data.frame() of an S4 object whose package is missing fails
      # (it tries to load the package: no warning about that either)
      if (!isTRUE(suppressMessages(wd_quietly(is.data.frame(o))))) next
      nm <- if (is.null(names(objs))) "" else names(objs)[[k]]
      frames[[length(frames) + 1L]] <- list(
        label = if (nzchar(nm)) sprintf("%s [%s]", label, nm) else label, df = o)
    }
  }
  frames
}

test_that("arrow_to_rdata() writes save()'s and saveRDS()'s exact bytes for every data frame of the peer corpus", {
  dir <- wd_peers_dir()
  frames <- wd_peer_frames(dir)
  # The corpus holds 133 data frames R can read (R 4.2); far fewer means
  # the corpus or the loop is broken, and the test would prove little.
  expect_gt(length(frames), 100L)
  tmp <- local_tempdir()
  bad <- character()
  for (fr in frames) {
    problems <- unlist(lapply(c(3L, 2L), function(v) wd_problems(fr$df, v, tmp)))
    if (length(problems)) {
      bad <- c(bad, paste0(fr$label, ":\n", paste0("    ", problems, collapse = "\n")))
    }
  }
  expect(length(bad) == 0L,
         sprintf("%d of %d corpus data frames are not written as R writes them:\n%s",
                 length(bad), length(frames), paste0("  ", bad, collapse = "\n")))
})

# ---- frames built here -----------------------------------------------------

# A small frame of four rows to hang attributes on.
wd_base_frame <- function() {
  data.frame(i = c(1L, NA, 3L, 4L), d = c(0.5, NA, -Inf, 1e300),
             s = c("a", NA, "b", ""), stringsAsFactors = FALSE)
}

wd_with_attr <- function(name, value) {
  df <- wd_base_frame()
  attr(df, name) <- value
  df
}

test_that("a frame with .BaseNamespaceEnv in an attribute is written as save() writes it", {
  # R writes the base namespace as BASENAMESPACE_SXP (250); a writer that
  # writes 247 (PERSISTSXP) instead makes load() fail with "names in
  # persistent strings are not supported yet".
  df <- wd_with_attr("ns", .BaseNamespaceEnv)
  dir <- local_tempdir()
  for (v in c(3L, 2L)) {
    f <- file.path(dir, sprintf("native-v%d.RData", v))
    ref <- file.path(dir, sprintf("r-v%d.RData", v))
    save(df, file = ref, compress = FALSE, version = v)
    arrow_to_rdata(df, f, name = "df", compress = "none", version = v)
    expect_identical(file_bytes(f), file_bytes(ref),
                     label = sprintf("v%d: arrow_to_rdata() bytes", v),
                     expected.label = "save()'s bytes")
    back <- tryCatch(load_objects(f), error = function(e) e)
    if (inherits(back, "error")) {
      fail(sprintf("v%d: load() of arrow_to_rdata()'s file failed: %s", v,
                   conditionMessage(back)))
      next
    }
    expect_identical(back, list(df = df),
                     label = sprintf("v%d: load() of arrow_to_rdata()'s file", v))
    expect_identical(attr(back$df, "ns"), .BaseNamespaceEnv)
  }
  expect_writes_like_r(df, ".BaseNamespaceEnv attribute (.RData and .rds)", dir)
})

test_that("environments, language objects and functions in attributes are written as R writes them", {
  dir <- local_tempdir()
  holder <- new.env(parent = globalenv())
  assign("a", 1, envir = holder)
  assign("b", c("x", NA), envir = holder)
  fml <- stats::as.formula("y ~ x + z", env = globalenv())
  fun <- make_closure("function(x, y = 2) { z <- x + y; z * 2 }")
  cases <- list(
    baseenv = wd_with_attr("env", baseenv()),
    emptyenv = wd_with_attr("env", emptyenv()),
    globalenv = wd_with_attr("env", globalenv()),
    new_env = wd_with_attr("env", holder),
    # the same environment twice: the second is written as a reference
    env_twice = structure(wd_with_attr("env", holder), again = holder),
    missing_arg = wd_with_attr("missing", quote(expr = )),
    missing_arg_in_list = wd_with_attr("missing", list(quote(expr = ), 1)),
    formula = wd_with_attr("formula", fml),
    closure = wd_with_attr("fun", fun),
    builtin = wd_with_attr("fun", sum),
    call = wd_with_attr("call", quote(f(x, 1L, "a", g(y = TRUE)))),
    symbol = wd_with_attr("symbol", quote(some_symbol)),
    pairlist = wd_with_attr("pairlist", pairlist(a = 1, b = "x")),
    expression = wd_with_attr("expr", expression(a + 1, "b")),
    nulls_in_lists = wd_with_attr("nulls", list(a = NULL, b = list(NULL), c = list(x = NULL)))
  )
  for (nm in names(cases)) expect_writes_like_r(cases[[nm]], nm, dir)
})

test_that("columns of every kind are written as R writes them", {
  dir <- local_tempdir()
  latin1 <- "caf\xe9"
  Encoding(latin1) <- "latin1"
  bytes <- "\xff\xfe raw"
  Encoding(bytes) <- "bytes"
  utf8 <- enc2utf8("\u00e9t\u00e9 \u4e2d\u6587 \U0001F600")
  strings <- data.frame(s = c("ascii", NA_character_, latin1, utf8, bytes, ""),
                        stringsAsFactors = FALSE)
  expect_identical(Encoding(strings$s)[3:5], c("latin1", "UTF-8", "bytes"))

  df <- data.frame(id = 1:3)
  df$list <- list(1:2, "a", NULL)
  df$fac <- factor(c("b", NA, "a"), levels = c("a", "b", "c"))
  df$ord <- factor(c("lo", "hi", "lo"), levels = c("lo", "hi"), ordered = TRUE)
  df$date <- as.Date(c("2024-02-29", NA, "1900-01-01"))
  df$time <- as.POSIXct(c("2024-02-29 12:34:56.5", NA, "1969-12-31 23:59:59"),
                        tz = "America/New_York")
  df$utc <- structure(c(0, NA, 1.5e9), class = c("POSIXct", "POSIXt"), tzone = "UTC")
  df$mat <- matrix(c(1.5, 2, NA, 4, 5, 6), nrow = 3)
  df$sub <- data.frame(a = c(TRUE, NA, FALSE), b = c("x", "y", NA), stringsAsFactors = FALSE)
  df$cplx <- complex(real = c(1, NA, 0), imaginary = c(-1, 2, NaN))
  df$raw <- as.raw(c(0, 127, 255))
  df$int_attr <- structure(c(10L, 20L, 30L), label = "with a label", units = "cm")

  named_rows <- wd_base_frame()
  rownames(named_rows) <- c("first", "second", "third", "fourth")

  zero <- df[0, ]
  zero_cols <- data.frame()

  cases <- list(strings = strings, every_column = df, character_row_names = named_rows,
                zero_rows = zero, no_columns = zero_cols,
                integer_row_names = df[c(3, 1), ])
  for (nm in names(cases)) expect_writes_like_r(cases[[nm]], nm, dir)
})

test_that("a long frame (parallel blocks) is written as R writes it", {
  n <- 200000L
  set.seed(11)
  words <- c("alpha", "beta", "gamma", NA, "\u00e9t\u00e9", "")
  df <- data.frame(
    seq = seq_len(n), # a compact sequence: ALTREP in version 3
    int = sample(c(NA, -5:5), n, replace = TRUE),
    dbl = stats::rnorm(n),
    lgl = sample(c(TRUE, FALSE, NA), n, replace = TRUE),
    chr = sample(words, n, replace = TRUE),
    fac = factor(sample(c("x", "y", "z"), n, replace = TRUE)),
    stringsAsFactors = FALSE
  )
  df$dbl[c(1L, n)] <- c(NA, NaN)
  df$uniq <- sprintf("row %d", seq_len(n))
  expect_writes_like_r(df, sprintf("%d rows", n), local_tempdir())
})

test_that("ALTREP columns (compact sequences, wrappers, deferred strings) are written as R writes them", {
  # R writes a wrapper (wrap_real, wrap_integer, wrap_string, ...) as an
  # ALTREP node only when it knows something (sortedness or no NA); one that
  # knows nothing, as load() gives some, is written as the plain vector.
  # .Internal(wrap_meta()) is how R makes them (sort() and friends use it).
  # R forgets what a wrapper knows when anything asks for its data to write
  # (identical() and serialize(version = 2) do), so every write starts from
  # fresh columns.
  wrap <- function(x, srt, no_na) .Internal(wrap_meta(x, srt, no_na))
  columns <- function() list(
    compact_up = 1:6,
    compact_down = 6:1,
    wrap_real_no_meta = wrap(c(0.5, NA, 2.5, -1, 3, 4), NA_integer_, 0L),
    wrap_real_sorted = wrap(c(-1, 0.5, 2.5, 3, 4, 10), 1L, 1L),
    wrap_int_no_meta = wrap(c(3L, 1L, NA, 2L, 5L, 4L), NA_integer_, 0L),
    wrap_int_sorted = wrap(c(1L, 2L, 3L, 5L, 8L, 13L), 1L, 1L),
    wrap_string_no_meta = wrap(c("b", NA, "a", "c", "", "z"), NA_integer_, 0L),
    wrap_lgl_no_na = wrap(c(TRUE, FALSE, TRUE, TRUE, FALSE, FALSE), NA_integer_, 1L),
    deferred_string = as.character(101:106)
  )
  frame <- function(nm) {
    df <- data.frame(id = seq_len(6L) * 10L)
    df[[nm]] <- columns()[[nm]]
    df
  }
  # the frames are what they should be: R writes the wrappers that know
  # something as ALTREP, the others as plain vectors
  expect_identical(altrep_class(frame("wrap_real_sorted")$wrap_real_sorted), "wrap_real")
  expect_identical(altrep_class(frame("wrap_real_no_meta")$wrap_real_no_meta), NA_character_)
  dir <- local_tempdir()
  for (nm in names(columns())) {
    label <- sprintf("column %s (R writes it as %s in version 3)", nm,
                     if (is.na(altrep_class(frame(nm)[[nm]]))) "a plain vector"
                     else altrep_class(frame(nm)[[nm]]))
    problems <- character()
    for (v in c(3L, 2L)) {
      for (route in c("rdata", "rds")) {
        problems <- c(problems, wd_problems(frame(nm), v, dir, routes = route))
      }
    }
    expect(length(problems) == 0L,
           sprintf("%s:\n%s", label, paste0("  ", problems, collapse = "\n")))
  }
})
