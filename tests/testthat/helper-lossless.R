# Helpers for the lossless round-trip tests (test-lossless-circle.R) and the
# "never worse than arrow R" tests (test-never-worse-than-arrow.R).
#
# R -> Arrow -> R must give back identical() objects through every route:
#   a     rdata_to_arrow() -> arrow_to_rdata() -> load()
#   a.rds rdata_to_arrow() -> arrow_to_rdata(<.rds>) -> readRDS()
#   b     arrow::as_arrow_table(rdata_to_arrow()) -> arrow_to_rdata() -> load()
#   c     rdata_to_ipc(format = "file") -> ipc_to_rdata() -> load()
#   d     rdata_to_ipc(format = "stream") -> ipc_to_rdata() -> load()
#   e     rdarrow to-arrow -> rdarrow to-rdata -> load()
#   e.rds rdarrow to-arrow -> rdarrow to-rdata -o <.rds> -> readRDS()
#   p     rdata_to_parquet() -> parquet_to_rdata() -> load()
#
# Everything here uses base R and rdarrow only (arrow R where a route
# needs it), no testthat: the corpus tests source this file (with
# helper-corpus.R) into a child R process (lc_helper_files()) and run the
# same functions there.

# The files a corpus child sys.source()s: helper-corpus.R and this file.
lc_helper_files <- function() {
  c(corpus_helper_file(), normalizePath(file.path(testthat::test_path(), "helper-lossless.R")))
}

lc_route_labels <- c(
  a = "rdata_to_arrow() -> arrow_to_rdata() -> load()",
  a.rds = "rdata_to_arrow() -> arrow_to_rdata(<.rds>) -> readRDS()",
  b = "arrow::as_arrow_table(rdata_to_arrow()) -> arrow_to_rdata() -> load()",
  c = "rdata_to_ipc(format = \"file\") -> ipc_to_rdata() -> load()",
  d = "rdata_to_ipc(format = \"stream\") -> ipc_to_rdata() -> load()",
  e = "rdarrow to-arrow -> rdarrow to-rdata -> load()",
  e.rds = "rdarrow to-arrow -> rdarrow to-rdata -o <.rds> -> readRDS()",
  p = "rdata_to_parquet() -> parquet_to_rdata() -> load()"
)

# ---------------------------------------------------------------------------
# The objects of part 1: every column kind, and objects that are not data
# frames. Small (n = 50) and random where the spec says so (seeded).

lc_objects <- function(n = 50L) {
  set.seed(20240601)
  o <- list()
  na_at <- function(x, i) { x[i] <- NA; x }

  # --- data frames, one column kind each ---------------------------------
  o$df_integer <- data.frame(x = c(sample.int(1000L, n - 4L) - 500L, NA, 0L,
                                   .Machine$integer.max, -.Machine$integer.max))
  o$df_double <- data.frame(x = c(rnorm(n - 8L) * 1e3, NA, NaN, -0, 0, Inf, -Inf,
                                  1e-300, .Machine$double.xmax))
  chr <- c("a", NA, "NA", "", "na\u00efve caf\u00e9", "\u65e5\u672c\u8a9e", "\U0001F600",
           "a string longer than twelve bytes")
  o$df_character <- data.frame(x = c(chr, sample(c(letters, NA), n - length(chr), TRUE)),
                               stringsAsFactors = FALSE)
  o$df_latin1 <- data.frame(
    x = iconv(rep(c("caf\u00e9", "abc", NA, "\u00fcber", "", "NA"), length.out = n),
              "UTF-8", "latin1"),
    stringsAsFactors = FALSE)
  o$df_logical <- data.frame(x = sample(c(TRUE, FALSE, NA), n, TRUE))
  o$df_factor <- data.frame(x = factor(sample(c("b", "a", "\u00e9", NA), n, TRUE),
                                       levels = c("b", "a", "unused", "\u00e9")))
  o$df_ordered <- data.frame(x = factor(sample(c("lo", "hi", NA), n, TRUE),
                                        levels = c("lo", "mid", "hi"), ordered = TRUE))
  o$df_date_double <- data.frame(x = na_at(as.Date("2020-01-01") + c(-20000, seq_len(n - 1L) * 37),
                                           3L))
  o$df_date_integer <- data.frame(x = structure(na_at(c(-25000L, 18000L + seq_len(n - 1L)), 5L),
                                                class = "Date"))
  o$df_date_fractional <- data.frame(x = na_at(as.Date("2020-01-01") + runif(n, -1e4, 1e4), 2L))
  base_utc <- as.POSIXct("2020-01-01", tz = "UTC")
  o$df_posixct_utc_whole <- data.frame(x = na_at(base_utc + round(runif(n, -3e8, 3e8)), 4L))
  o$df_posixct_ny_ms <- data.frame(
    x = na_at(as.POSIXct("2020-01-01", tz = "America/New_York") + round(runif(n, 0, 3e8), 3), 6L))
  o$df_posixct_no_tzone <- data.frame(
    x = structure(na_at(1.6e9 + round(runif(n, 0, 1e6)), 7L), class = c("POSIXct", "POSIXt")))
  o$df_posixct_empty_tz <- data.frame(
    x = .POSIXct(na_at(1.6e9 + round(runif(n, 0, 1e6), 3), 8L), tz = ""))
  runif_times <- base_utc + runif(n, 0, 3e8)
  runif_times[9] <- NA
  unclass_times <- unclass(runif_times)
  unclass_times[10] <- NaN
  o$df_posixct_runif <- data.frame(x = .POSIXct(unclass_times, tz = "UTC"))
  o$df_posixct_runif_ny <- data.frame(x = .POSIXct(as.numeric(base_utc) + runif(n, -3e8, 3e8),
                                                   tz = "America/New_York"))
  for (u in c("secs", "mins", "hours", "days", "weeks")) {
    o[[paste0("df_difftime_", u, "_whole")]] <-
      data.frame(x = as.difftime(na_at(round(runif(n, -100, 100)), 2L), units = u))
    o[[paste0("df_difftime_", u, "_frac")]] <-
      data.frame(x = as.difftime(na_at(runif(n, 0, 100), 3L), units = u))
  }
  o$df_difftime_secs_intstore <- data.frame(x = as.difftime(na_at(seq_len(n) * 7L, 4L),
                                                            units = "secs"))
  o$df_difftime_days_intstore <- data.frame(x = as.difftime(na_at(seq_len(n) - 10L, 4L),
                                                            units = "days"))
  if (requireNamespace("hms", quietly = TRUE)) {
    o$df_hms_whole <- data.frame(x = hms::hms(seconds = na_at(round(runif(n, 0, 86399)), 2L)))
    o$df_hms_frac <- data.frame(x = hms::hms(seconds = na_at(runif(n, 0, 86400), 2L)))
  }
  if (requireNamespace("bit64", quietly = TRUE)) {
    o$df_integer64 <- data.frame(x = bit64::as.integer64(c(
      "1", NA, "9007199254740993", "-9223372036854775807", "9223372036854775807", "0",
      "-9007199254740993", as.character(sample.int(1e6, n - 7L)))))
  }
  o$df_raw <- data.frame(x = as.raw(sample(0:255, n, TRUE)))
  cplx <- complex(real = rnorm(n), imaginary = rnorm(n))
  cplx[2] <- NA
  cplx[3] <- complex(real = NaN, imaginary = 1)
  cplx[4] <- complex(real = 1, imaginary = NaN)
  cplx[5] <- complex(real = -0, imaginary = Inf)
  o$df_complex <- data.frame(x = cplx)
  lists <- function(f) lapply(seq_len(n), f)
  d <- data.frame(id = seq_len(n))
  d$l <- lists(function(i) if (i %% 7 == 0) integer(0) else c(sample.int(100L, i %% 4 + 1L), if (i %% 5 == 0) NA))
  o$df_list_integer <- d
  d <- data.frame(id = seq_len(n))
  d$l <- lists(function(i) if (i %% 6 == 0) character(0) else c(sample(letters, i %% 3 + 1L), if (i %% 4 == 0) NA))
  o$df_list_character <- d
  d <- data.frame(id = seq_len(n))
  d$l <- lists(function(i) if (i %% 3 == 0) NULL else runif(i %% 4))
  o$df_list_null <- d
  d <- data.frame(id = seq_len(n))
  d$l <- lists(function(i) if (i %% 5 == 0) raw(0) else as.raw(sample(0:255, i %% 6 + 1L)))
  o$df_list_raw <- d
  d <- data.frame(id = seq_len(n))
  d$sub <- data.frame(a = na_at(runif(n), 2L), b = sample(c("x", NA, "\u00e9"), n, TRUE),
                      stringsAsFactors = FALSE)
  o$df_nested_df <- d
  if (requireNamespace("tibble", quietly = TRUE)) {
    o$df_tibble <- tibble::tibble(a = seq_len(n), b = sample(c("x", NA, "z"), n, TRUE),
                                  c = na_at(runif(n), 3L))
  }
  if (requireNamespace("data.table", quietly = TRUE)) {
    # its self reference is a pointer load() gives as nil
    o$df_data_table <- data.table::data.table(k = sample(c("b", "a", NA), n, TRUE), v = na_at(runif(n), 4L))
    data.table::setkeyv(o$df_data_table, "k")
  }
  # row names after subsetting: integers, not 1..n
  o$df_int_row_names <- data.frame(a = seq_len(2L * n), b = runif(2L * n))[seq(2L, 2L * n, by = 2L), ]
  # a time without a zone inside a data-frame column
  d <- data.frame(id = seq_len(n))
  d$sub <- data.frame(t = .POSIXct(na_at(1.6e9 + seq_len(n) / 4, 3L)),
                      e = .POSIXct(1.6e9 + seq_len(n) * 1.0, tz = ""))
  o$df_nested_no_tzone <- d
  o$df_row_names <- data.frame(a = seq_len(n), b = sample(c("x", "y", NA), n, TRUE),
                               row.names = paste0("r", seq_len(n), c("", "\u00e9")),
                               stringsAsFactors = FALSE)
  d <- data.frame(a = seq_len(n), b = na_at(runif(n), 1L))
  attr(d, "note") <- "a note on the frame"
  attr(d, "meta") <- list(version = 2L, tags = c("x", "y"))
  attr(d$a, "label") <- "Label of a"
  attr(d$b, "units") <- "kg"
  o$df_attributes <- d
  o$df_every_kind <- data.frame(
    int = o$df_integer$x, dbl = o$df_double$x, chr = o$df_character$x,
    lgl = o$df_logical$x, fct = o$df_factor$x, ord = o$df_ordered$x,
    date = o$df_date_double$x, utc = o$df_posixct_runif$x, ny = o$df_posixct_ny_ms$x,
    mins = o$df_difftime_mins_frac$x, stringsAsFactors = FALSE)

  # --- objects that are not data frames ----------------------------------
  o$vec_integer <- c(sample.int(1000L, n - 2L), NA, .Machine$integer.max)
  o$vec_double <- c(rnorm(n - 6L), NA, NaN, -0, Inf, -Inf, 0.1)
  o$vec_character <- c(chr, sample(letters, n - length(chr), TRUE))
  o$vec_latin1 <- iconv(c("caf\u00e9", "abc", NA, "\u00fcber"), "UTF-8", "latin1")
  o$vec_logical <- sample(c(TRUE, FALSE, NA), n, TRUE)
  o$vec_raw <- as.raw(sample(0:255, n, TRUE))
  o$vec_complex <- cplx
  o$vec_named_double <- stats::setNames(runif(5), c("a", "b", "", NA, "\u00e9"))
  o$vec_named_integer <- c(one = 1L, two = 2L, missing = NA)
  o$vec_named_character <- c(a = "x", b = NA, c = "\u00e9")
  o$vec_named_complex <- c(foo = 3 + 2i, bar = NA)
  o$vec_factor <- factor(sample(c("b", "a", NA), n, TRUE), levels = c("b", "a", "unused"))
  o$vec_ordered <- factor(c("lo", "hi", NA), levels = c("lo", "mid", "hi"), ordered = TRUE)
  o$vec_date <- na_at(as.Date("2020-01-01") + seq_len(n), 2L)
  o$vec_posixct <- na_at(base_utc + runif(n, 0, 3e8), 2L)
  o$vec_posixct_ny <- .POSIXct(1.6e9 + c(0.5, NA, 3600), tz = "America/New_York")
  o$vec_difftime <- as.difftime(na_at(runif(n, 0, 100), 2L), units = "mins")
  o$vec_difftime_weeks <- as.difftime(c(1, 2.5, NA), units = "weeks")
  o$mat_integer <- matrix(seq_len(12L), 3L)
  o$mat_double <- matrix(c(runif(11), NA), 4L)
  o$mat_character <- matrix(c(letters[1:5], NA), 2L)
  o$mat_logical <- matrix(c(TRUE, FALSE, NA, TRUE), 2L)
  o$mat_integer_dimnames <- matrix(1:6, 2L, dimnames = list(c("r1", "r2"), c("a", "b", "c")))
  o$mat_double_named_dimnames <- matrix(runif(6), 3L,
                                        dimnames = list(rows = c("x", "y", "z"), cols = c("p", "q")))
  o$mat_character_coldimnames <- matrix(c("u", "v", "w", NA), 2L, dimnames = list(NULL, c("A", "B")))
  o$mat_logical_dimnames <- matrix(c(TRUE, NA, FALSE, TRUE), 2L,
                                   dimnames = list(c("r1", "r2"), c("c1", "c2")))
  o$array_3d <- array(seq_len(24L), c(2L, 3L, 4L),
                      dimnames = list(x = c("a", "b"), y = c("p", "q", "r"), z = paste0("z", 1:4)))
  o$ts_monthly <- stats::ts(round(runif(36) * 100, 1), start = c(2019, 4), frequency = 12)
  o$ts_mts <- stats::ts(matrix(runif(24), 12L, dimnames = list(NULL, c("a", "b"))),
                        start = c(2020, 1), frequency = 12)
  o$table_1d <- table(c("a", "b", "a"))
  o$table_2d <- table(x = c("a", "b", "a", "b"), y = c("u", "u", "v", "v"))
  v <- seq_len(5L)
  attr(v, "note") <- "n"
  o$vec_attr_note <- v
  v <- runif(4)
  comment(v) <- "a comment"
  o$vec_comment <- v

  # --- lists whose elements differ in type, S4 objects --------------------
  o$list_mixed_result <- list(coef = c(a = 1.5, b = -2), n = 10L, method = "ols",
                              converged = TRUE, resid = round(rnorm(5), 3),
                              when = as.Date("2020-01-01") + 0:1, note = NULL)
  o$list_mixed_unnamed <- list(1:3, "a", c(2.5, NA), NULL, list(1, "b"),
                               factor(c("q", NA)), TRUE, 4.5)
  df <- data.frame(id = 1:4)
  df$l <- list(1:2, "a", NULL, list(x = 1, y = "z"))
  o$df_list_mixed <- df
  # (a list column's names name its rows: a union still, never a struct)
  df <- data.frame(id = 1:3)
  df$l <- list(a = 1:2, b = "a", c = list(x = 1, y = "z"))
  o$df_list_named_mixed <- df
  o$list_matrix_factor <- list(m = matrix(1:6, 2L, dimnames = list(c("r1", "r2"), NULL)),
                               f = factor(c("u", "v", "u"), levels = c("v", "u")))
  o$list_nested_frames <- list(df = data.frame(x = 1:3, y = c("a", "b", NA)),
                               v = c(1.5, 2.5),
                               inner = list(d = data.frame(z = TRUE), w = "q",
                                            k = list(1L, "x", list(NULL, 2.5))))
  # (a function of the global environment: one made here would hold this
  # function's frame, all of these objects)
  o$list_with_function <- list(a = 1, f = eval(quote(function(x) x + 1), globalenv()),
                               e = quote(a + b), s = "x")
  lc_classes()
  o$s4_slots <- methods::new("lcRecord", num = c(1, NA, 3), chr = c("z", NA),
                             lst = list(1L, "a", NULL), mat = matrix(c(1.5, 2.5, 3.5, 4.5), 2L),
                             fac = factor(c("p", "q")))
  o$s4_integer <- methods::new("lcCount", c(1L, NA, 3L), note = "counts")
  o$s4_numeric <- methods::new("lcAmount", c(0.5, -1))
  o$s4_nested <- list(a = methods::new("lcCount", 1:2, note = "n"), b = "x")
  if (requireNamespace("Matrix", quietly = TRUE)) {
    o$s4_dgeMatrix <- methods::new("dgeMatrix", Dim = c(2L, 3L), x = as.numeric(1:6),
                                   Dimnames = list(c("a", "b"), NULL))
  }
  o
}

# The S4 classes of lc_objects(), defined in the global environment (where
# a saved object's class is looked up).
lc_classes <- function() {
  methods::setClass("lcRecord", representation(num = "numeric", chr = "character",
                                               lst = "list", mat = "matrix", fac = "factor"),
                    where = globalenv())
  methods::setClass("lcCount", contains = "integer", representation(note = "character"),
                    where = globalenv())
  methods::setClass("lcAmount", contains = "numeric", where = globalenv())
  invisible()
}

# The objects of the multi-threaded case: a few hundred thousand rows.
lc_big_objects <- function(n = 300000L) {
  set.seed(7)
  base <- as.POSIXct("2020-01-01", tz = "UTC")
  dbl <- rnorm(n) * 1e6
  dbl[c(5L, n)] <- c(NA, NaN)
  tm <- base + runif(n, 0, 3e8)
  tm[c(3L, n - 1L)] <- NA
  mins <- as.difftime(runif(n, 0, 100), units = "mins")
  mins[7L] <- NA
  list(big_df = data.frame(dbl = dbl, tm = tm, mins = mins),
       big_double = dbl, big_posixct = tm, big_difftime = mins)
}

# save() the objects (a named list) into one .RData file; returns its path.
lc_save <- function(objs, file) {
  e <- list2env(objs, envir = new.env(parent = emptyenv()))
  save(list = names(objs), envir = e, file = file)
  file
}

# ---------------------------------------------------------------------------
# The peer corpus (RDARROW_PEERS_DIR), worked through in child R processes


# Run `child` over `files` in child R processes. The child appends each
# file's path to `progress` before working on it and saves the rows of
# every file it is done with into the folder paste0(progress, "-rows") (a
# data frame: file, object, route, status, message). A crash becomes an
# "error" row (route "all") for the file being converted, and the run goes
# on with the next file. Returns all rows, in the order of `files`.
lc_run_in_children <- function(child, files, root, args) {
  progress <- tempfile("lc-progress-")
  rows_dir <- paste0(progress, "-rows")
  dir.create(rows_dir)
  on.exit(unlink(c(progress, rows_dir), recursive = TRUE))
  crashes <- list()
  todo <- files
  while (length(todo)) {
    file.create(progress)
    out <- tryCatch(
      callr::r(child, args = c(list(todo, root, progress), args),
               env = c(callr::rcmd_safe_env(),
                       RETICULATE_PYTHON = Sys.getenv("RETICULATE_PYTHON"),
                       TZ = "UTC")),
      error = function(e) e)
    if (!inherits(out, "error")) break
    seen <- readLines(progress, warn = FALSE)
    crashed <- if (length(seen)) seen[[length(seen)]] else todo[[1]]
    crashes[[length(crashes) + 1L]] <- data.frame(
      file = sub(root, "", crashed, fixed = TRUE), object = NA_character_, route = "all",
      status = "error", message = paste("the R process died:", conditionMessage(out)),
      stringsAsFactors = FALSE)
    todo <- todo[-seq_len(match(crashed, todo))]
  }
  parts <- lapply(list.files(rows_dir, full.names = TRUE), readRDS)
  res <- do.call(rbind, c(parts, crashes))
  if (is.null(res)) {
    return(data.frame(file = character(), object = character(), route = character(),
                      status = character(), message = character(), stringsAsFactors = FALSE))
  }
  res[order(match(res$file, sub(root, "", files, fixed = TRUE))), , drop = FALSE]
}

# ---------------------------------------------------------------------------
# Running the routes

# Read back a written file: readRDS() for .rds, else load(), which must
# give exactly the object `name`.
lc_read_back <- function(out, name) {
  if (grepl("\\.rds$", out, ignore.case = TRUE)) return(readRDS(out))
  e <- new.env(parent = emptyenv())
  nms <- load(out, envir = e)
  if (!identical(nms, name)) {
    stop(sprintf("load() of the result gives {%s}, not '%s'", paste(nms, collapse = ", "), name))
  }
  get(name, envir = e, inherits = FALSE)
}

# Run the command-line tool; an error (with its standard error) when it
# exits with a non-zero status.
lc_cli_run <- function(cli, args) {
  err <- tempfile()
  on.exit(unlink(err))
  status <- suppressWarnings(system2(cli, shQuote(args), stdout = FALSE, stderr = err))
  if (!identical(as.integer(status), 0L)) {
    stop(sprintf("rdarrow %s exited with status %s: %s", args[[1]], status,
                 paste(readLines(err, warn = FALSE), collapse = " ")))
  }
  invisible(TRUE)
}

# Convert object `o` of `f` along `route` (see lc_route_labels) in `dir`;
# returns what load()/readRDS() gives back. `cli` is the path of the
# rdarrow binary (routes e and e.rds).
lc_route <- function(route, f, o, dir, cli = NULL) {
  out_rdata <- file.path(dir, "out.RData")
  out_rds <- file.path(dir, "out.rds")
  ipc <- file.path(dir, "x.arrow")
  pq <- file.path(dir, "x.parquet")
  unlink(c(out_rdata, out_rds, ipc, pq))
  switch(route,
    a = {
      rdarrow::arrow_to_rdata(rdarrow::rdata_to_arrow(f, object = o), out_rdata, name = o)
      lc_read_back(out_rdata, o)
    },
    a.rds = {
      rdarrow::arrow_to_rdata(rdarrow::rdata_to_arrow(f, object = o), out_rds, name = o)
      lc_read_back(out_rds, o)
    },
    b = {
      tab <- arrow::as_arrow_table(rdarrow::rdata_to_arrow(f, object = o))
      rdarrow::arrow_to_rdata(tab, out_rdata, name = o)
      lc_read_back(out_rdata, o)
    },
    c = ,
    d = {
      rdarrow::rdata_to_ipc(f, ipc, object = o, format = if (route == "c") "file" else "stream")
      rdarrow::ipc_to_rdata(ipc, out_rdata, name = o)
      lc_read_back(out_rdata, o)
    },
    p = {
      rdarrow::rdata_to_parquet(f, pq, object = o)
      rdarrow::parquet_to_rdata(pq, out_rdata, name = o)
      lc_read_back(out_rdata, o)
    },
    e = ,
    e.rds = {
      if (is.null(cli)) stop("the rdarrow binary is not available")
      out <- if (route == "e") out_rdata else out_rds
      lc_cli_run(cli, c("to-arrow", f, "--object", o, "-o", ipc))
      lc_cli_run(cli, c("to-rdata", ipc, "-o", out, "--name", o))
      lc_read_back(out, o)
    },
    stop("unknown route ", route)
  )
}

# Strict identical(): doubles bit for bit (num.eq = FALSE tells -0 from 0),
# NA apart from NaN.
lc_identical <- function(got, ref) {
  identical(got, ref, num.eq = FALSE) || lc_same_bytes(got, ref)
}

# `got` and `ref` serialize to the same bytes: the comparison for objects
# that hold environments, which are never identical() to another (even
# after R's own save() and load()); the bytes hold each environment's
# bindings, hash table, parent and attributes. Version 2 writes ALTREP
# vectors (a compact 1:3) as their values, a representation identical()
# does not see either.
lc_same_bytes <- function(got, ref) {
  identical(serialize(got, NULL, version = 2L), serialize(ref, NULL, version = 2L))
}

# Run one route and compare with `ref`: list(status = "identical",
# "different" or "error", message = the first difference or the error).
lc_check_route <- function(route, f, o, ref, dir, cli = NULL) {
  warns <- character()
  got <- tryCatch(
    withCallingHandlers(lc_route(route, f, o, dir, cli), warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    }),
    error = function(e) e)
  wtxt <- if (length(warns)) paste0(" [warnings: ", paste(unique(warns), collapse = "; "), "]") else ""
  # (not inherits() on an S4 object: that looks its class up, which fails
  # where the class's package is not installed)
  if (!isS4(got) && inherits(got, "error")) {
    return(list(status = "error",
                message = paste0(class(got)[[1]], ": ", conditionMessage(got), wtxt)))
  }
  if (lc_identical(got, ref)) return(list(status = "identical", message = ""))
  list(status = "different", message = paste0(lc_first_diff(got, ref), wtxt))
}

# ---------------------------------------------------------------------------
# Describing the first difference between two objects

lc_short <- function(x, width = 60L) {
  s <- tryCatch(paste(deparse(x, width.cutoff = 60L, control = c("keepNA", "keepInteger")),
                      collapse = " "),
                error = function(e) paste0("<", typeof(x), ">"))
  if (nchar(s) > width) paste0(substr(s, 1L, width), "...") else s
}

lc_fmt_elt <- function(x) {
  if (is.double(x)) {
    if (is.na(x)) return(if (is.nan(x)) "NaN" else "NA")
    if (x == 0 && 1 / x < 0) return("-0")
    return(sprintf("%.17g", x))
  }
  if (is.complex(x)) return(sprintf("%s%+si", lc_fmt_elt(Re(x)), lc_fmt_elt(Im(x))))
  if (is.character(x)) {
    if (is.na(x)) return("NA_character_")
    return(sprintf("\"%s\" (%s)", x, Encoding(x)))
  }
  lc_short(x)
}

# Positions where two atomic vectors of one type and length differ.
lc_diff_positions <- function(got, ref) {
  if (is.double(got)) {
    same <- (got == ref) %in% TRUE & (got != 0 | (1 / got == 1 / ref)) %in% TRUE
    same <- same | (is.na(got) & is.na(ref) & is.nan(got) == is.nan(ref))
    which(!same)
  } else if (is.complex(got)) {
    union(lc_diff_positions(Re(got), Re(ref)), lc_diff_positions(Im(got), Im(ref)))
  } else if (is.list(got)) {
    which(!vapply(seq_along(got), function(i) lc_identical(got[[i]], ref[[i]]), TRUE))
  } else {
    which(!((got == ref) %in% TRUE | (is.na(got) & is.na(ref))))
  }
}

lc_largest_difference <- function(got, ref) {
  if (!is.double(got) || length(got) < 2L) return("")
  d <- abs(got - ref)
  d <- d[!is.na(d)]
  if (!length(d)) return("")
  sprintf(", largest difference %.3g", max(d))
}

# A one-line description of the first difference of `got` from `ref`.
lc_first_diff <- function(got, ref, path = "x") {
  if (!identical(typeof(got), typeof(ref))) {
    return(sprintf("%s: typeof %s (class %s), want %s (class %s)", path, typeof(got),
                   paste(class(got), collapse = "/"), typeof(ref), paste(class(ref), collapse = "/")))
  }
  if (!identical(class(got), class(ref))) {
    return(sprintf("%s: class %s, want %s", path, paste(class(got), collapse = "/"),
                   paste(class(ref), collapse = "/")))
  }
  if (!identical(isS4(got), isS4(ref))) {
    return(sprintf("%s: isS4() is %s, want %s", path, isS4(got), isS4(ref)))
  }
  if (!identical(is.object(got), is.object(ref))) {
    return(sprintf("%s: is.object() is %s, want %s", path, is.object(got), is.object(ref)))
  }
  if (is.environment(got) || is.function(got) || is.language(got)) {
    return(sprintf("%s: %s objects differ", path, typeof(got)))
  }
  ag <- attributes(got)
  ar <- attributes(ref)
  if (!setequal(names(ag), names(ar))) {
    return(sprintf("%s: attributes {%s}, want {%s}", path, paste(names(ag), collapse = ", "),
                   paste(names(ar), collapse = ", ")))
  }
  if (!identical(length(got), length(ref))) {
    return(sprintf("%s: length %d, want %d", path, length(got), length(ref)))
  }
  for (k in names(ar)) {
    if (!lc_identical(ag[[k]], ar[[k]])) {
      if (k == "row.names") {
        return(sprintf("%s: row.names %s, want %s", path, lc_short(ag[[k]]), lc_short(ar[[k]])))
      }
      inner <- lc_first_diff(ag[[k]], ar[[k]], sprintf("attr(%s, \"%s\")", path, k))
      return(inner)
    }
  }
  if (is.list(got)) {
    nms <- names(ref)
    for (i in seq_along(ref)) {
      if (!lc_identical(got[[i]], ref[[i]])) {
        sub <- if (!is.null(nms) && !is.na(nms[[i]]) && nzchar(nms[[i]])) {
          sprintf("%s$%s", path, nms[[i]])
        } else {
          sprintf("%s[[%d]]", path, i)
        }
        if (is.null(got[[i]]) || is.null(ref[[i]])) {
          return(sprintf("%s: %s, want %s", sub, lc_short(got[[i]]), lc_short(ref[[i]])))
        }
        return(lc_first_diff(got[[i]], ref[[i]], sub))
      }
    }
    return(sprintf("%s: not identical (no element or attribute differs)", path))
  }
  if (is.atomic(got)) {
    pos <- lc_diff_positions(unclass(got), unclass(ref))
    if (length(pos)) {
      i <- pos[[1]]
      return(sprintf("%s[%d]: %s, want %s (%d of %d elements differ%s)", path, i,
                     lc_fmt_elt(unclass(got)[[i]]), lc_fmt_elt(unclass(ref)[[i]]),
                     length(pos), length(got),
                     lc_largest_difference(unclass(got)[pos], unclass(ref)[pos])))
    }
    if (is.character(got) && !identical(Encoding(got), Encoding(ref))) {
      return(sprintf("%s: encodings differ", path))
    }
  }
  sprintf("%s: not identical (%s)", path, typeof(got))
}

# ---------------------------------------------------------------------------
# "Never worse than arrow R": rdarrow's Arrow data, as arrow R converts it
# back (a), against arrow R's own round trip (b), for the original data
# frame `df`. Returns the problems (character(0) when a is as good or
# better).

# Numeric or time values in a common unit (seconds for times, dates and
# durations), or NULL for other kinds.
lc_numeric_value <- function(x) {
  if (!is.atomic(x) || !is.null(dim(x)) || is.factor(x)) return(NULL)
  if (inherits(x, "difftime")) {
    mult <- c(secs = 1, mins = 60, hours = 3600, days = 86400, weeks = 604800)
    u <- attr(x, "units")
    if (is.null(u) || !u %in% names(mult)) u <- "secs"
    return(as.numeric(unclass(x)) * mult[[u]])
  }
  if (inherits(x, "integer64")) return(as.numeric(as.character(x)))
  if (inherits(x, "Date")) return(as.numeric(unclass(x)) * 86400)
  if (inherits(x, "POSIXct")) return(as.numeric(unclass(x)))
  if (is.numeric(unclass(x))) return(as.numeric(unclass(x)))
  NULL
}

# How far x is from ref: c(wrong = positions whose value is not ref's (NA
# apart from NaN), err = largest difference where both have a number), or
# NULL when x is not comparable (not numbers, another length).
lc_distance <- function(x, ref) {
  xv <- lc_numeric_value(x)
  rv <- lc_numeric_value(ref)
  if (is.null(xv) || is.null(rv) || length(xv) != length(rv)) return(NULL)
  same <- (xv == rv) %in% TRUE | (is.na(xv) & is.na(rv) & is.nan(xv) == is.nan(rv))
  both <- !is.na(xv) & !is.na(rv)
  d <- abs(xv[both] - rv[both])
  d[(xv[both] == rv[both]) %in% TRUE] <- 0
  d[is.na(d)] <- Inf
  c(wrong = sum(!same), err = max(c(0, d)))
}

lc_attr_problems <- function(a, b, ref, path, skip) {
  out <- character()
  for (k in setdiff(union(names(attributes(a)), names(attributes(b))), skip)) {
    va <- attr(a, k, exact = TRUE)
    if (!identical(va, attr(b, k, exact = TRUE)) && !identical(va, attr(ref, k, exact = TRUE))) {
      out <- c(out, sprintf("%s: attribute '%s' is %s; arrow R gives %s, the original has %s",
                            path, k, lc_short(va), lc_short(attr(b, k, exact = TRUE)),
                            lc_short(attr(ref, k, exact = TRUE))))
    }
  }
  out
}

lc_class_str <- function(x) paste(class(x), collapse = "/")

# One column (or list element): a (rdarrow via arrow R), b (arrow R), ref
# (the original).
lc_column_problems <- function(a, b, ref, path) {
  if (identical(a, b) || identical(a, ref)) return(character())
  same_class <- identical(class(a), class(b)) || identical(class(a), class(ref))
  # data-frame columns: a data frame of b's or the original's class,
  # column by column no worse
  if (is.data.frame(ref) || is.data.frame(b)) {
    if (!is.data.frame(a) || !same_class) {
      return(sprintf("%s: a %s column, arrow R gives %s, the original is %s", path,
                     lc_class_str(a), lc_class_str(b), lc_class_str(ref)))
    }
    if (!identical(names(a), names(b)) && !identical(names(a), names(ref))) {
      return(sprintf("%s: columns {%s}, arrow R gives {%s}", path,
                     paste(names(a), collapse = ", "), paste(names(b), collapse = ", ")))
    }
    out <- lc_attr_problems(a, b, ref, path, c("names", "row.names", "class"))
    for (j in seq_along(a)) {
      out <- c(out, lc_column_problems(a[[j]], if (j <= length(b)) b[[j]] else NULL,
                                       if (j <= length(ref)) ref[[j]] else NULL,
                                       paste0(path, "$", names(a)[[j]])))
    }
    return(out)
  }
  # numbers and times: no more wrong values, no larger error than b's;
  # classes (Date, POSIXct, difftime, ...) b's or the original's, though a
  # bare integer may come back a bare double and the other way round
  da <- lc_distance(a, ref)
  if (!is.null(da)) {
    db <- lc_distance(b, ref)
    if (is.null(db)) db <- c(wrong = Inf, err = Inf)
    out <- character()
    bare <- !is.object(a) && !is.object(ref)
    if (!same_class && !bare) {
      out <- c(out, sprintf("%s: class %s, arrow R gives %s, the original is %s", path,
                            lc_class_str(a), lc_class_str(b), lc_class_str(ref)))
    }
    if (da[["wrong"]] > db[["wrong"]] || da[["err"]] > db[["err"]]) {
      out <- c(out, sprintf(paste0("%s: %g values differ from the original (largest difference %.3g); ",
                                   "arrow R's: %g (%.3g): %s"),
                            path, da[["wrong"]], da[["err"]], db[["wrong"]], db[["err"]],
                            lc_first_diff(a, ref, path)))
    }
    # (a duration in other units is the same duration: the values were
    # compared in seconds)
    skip <- if (inherits(a, "difftime") && inherits(ref, "difftime")) c("class", "units") else "class"
    out <- c(out, lc_attr_problems(a, b, ref, path, skip))
    return(out)
  }
  # list columns: element by element no worse; the list's class b's or the
  # original's; a "ptype" (arrow R's list_of) b's, the original's, or the
  # empty vector of a's elements
  if (is.list(ref) && is.list(a) && !is.data.frame(a) && length(a) == length(ref)) {
    out <- character()
    if (!same_class) {
      out <- c(out, sprintf("%s: a %s column, arrow R gives %s, the original is %s", path,
                            lc_class_str(a), lc_class_str(b), lc_class_str(ref)))
    }
    out <- c(out, lc_attr_problems(a, b, ref, path, c("class", "ptype")))
    pt <- attr(a, "ptype", exact = TRUE)
    first <- Find(Negate(is.null), unclass(a))
    if (!is.null(pt) && !identical(pt, attr(b, "ptype", exact = TRUE)) &&
        !identical(pt, attr(ref, "ptype", exact = TRUE)) &&
        !(is.atomic(first) && identical(pt, first[0]))) {
      out <- c(out, sprintf("%s: attribute 'ptype' is %s; arrow R gives %s", path, lc_short(pt),
                            lc_short(attr(b, "ptype", exact = TRUE))))
    }
    bl <- is.list(b) && length(b) == length(a)
    el <- character()
    for (i in seq_along(a)) {
      el <- c(el, lc_column_problems(unclass(a)[[i]], if (bl) unclass(b)[[i]] else NULL,
                                     unclass(ref)[[i]], sprintf("%s[[%d]]", path, i)))
      if (length(el) >= 3L) break
    }
    return(c(out, el))
  }
  sprintf("%s: neither identical() to arrow R's result (%s) nor to the original (%s): vs arrow R: %s",
          path, lc_class_str(b), lc_class_str(ref), lc_first_diff(a, b, path))
}

# The whole frame.
lc_never_worse_problems <- function(a, b, df) {
  if (identical(a, b) || identical(a, df)) return(character())
  out <- character()
  if (!is.data.frame(a)) return(sprintf("rdarrow's result is a %s", paste(class(a), collapse = "/")))
  if (!identical(class(a), class(b)) && !identical(class(a), class(df))) {
    out <- c(out, sprintf("class %s; arrow R gives %s, the original is %s",
                          paste(class(a), collapse = "/"), paste(class(b), collapse = "/"),
                          paste(class(df), collapse = "/")))
  }
  if (!identical(names(a), names(b)) && !identical(names(a), names(df))) {
    return(c(out, sprintf("columns {%s}; arrow R gives {%s}", paste(names(a), collapse = ", "),
                          paste(names(b), collapse = ", "))))
  }
  if (!identical(dim(a), dim(b))) {
    return(c(out, sprintf("%d rows x %d columns; arrow R gives %d x %d", nrow(a), ncol(a),
                          nrow(b), ncol(b))))
  }
  rn_ok <- identical(row.names(a), row.names(b)) ||
    (is.character(attr(df, "row.names")) && identical(attr(a, "row.names"), attr(df, "row.names")))
  if (!rn_ok) {
    out <- c(out, sprintf("row names %s; arrow R gives %s, the original has %s",
                          lc_short(attr(a, "row.names")), lc_short(attr(b, "row.names")),
                          lc_short(attr(df, "row.names"))))
  }
  out <- c(out, lc_attr_problems(a, b, df, "frame", c("names", "row.names", "class")))
  for (j in seq_along(a)) {
    out <- c(out, lc_column_problems(a[[j]], b[[j]], if (j <= length(df)) df[[j]] else NULL,
                                     paste0("$", names(a)[[j]])))
  }
  out
}

# a and b for a data frame `df` saved as object `o` of `f`: list(a, b,
# a_warnings), each of a and b the data frame or the error.
lc_never_worse_pair <- function(f, o, df) {
  warns <- character()
  a <- tryCatch(withCallingHandlers(
    as.data.frame(arrow::as_arrow_table(rdarrow::rdata_to_arrow(f, object = o))),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    }), error = function(e) e)
  b <- tryCatch(suppressWarnings(as.data.frame(arrow::arrow_table(df))), error = function(e) e)
  list(a = a, b = b, a_warnings = warns)
}

# The verdict for one data frame: list(status = "same" (a identical to b),
# "better", "arrow_fails" (arrow R errors: anything goes), "worse" or
# "rdarrow_fails", message).
lc_never_worse_verdict <- function(pair, df) {
  a <- pair$a
  b <- pair$b
  if (inherits(b, "error")) {
    return(list(status = "arrow_fails", message = conditionMessage(b)))
  }
  if (inherits(a, "error")) {
    return(list(status = "rdarrow_fails",
                message = sprintf("%s: %s (arrow R converts it)", class(a)[[1]], conditionMessage(a))))
  }
  if (identical(a, b)) return(list(status = "same", message = ""))
  p <- lc_never_worse_problems(a, b, df)
  if (length(p)) return(list(status = "worse", message = paste(p, collapse = "; ")))
  list(status = "better", message = "")
}
