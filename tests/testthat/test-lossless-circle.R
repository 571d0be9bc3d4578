# R -> Arrow -> R without loss: every object that converts to Arrow comes
# back identical() (doubles bit for bit) to what load() gives for the
# original, through every route (see lc_route_labels in helper-lossless.R):
# the C stream, an arrow R Table, IPC files and streams, the command line,
# to .RData and to .rds. Then the same over every object of the peer corpus
# (RDARROW_PEERS_DIR), and the choice of the object when none is named.

# Minutes of checks over many objects: they run where NOT_CRAN is set
# (tools/test.sh), not in CRAN's time-limited check.
skip_on_cran()

# Save the objects of part 1 into one .RData file; `ref` is what load()
# gives back for them (the objects each route must reproduce).
lc_fixture <- function(objs = lc_objects(), envir = parent.frame()) {
  dir <- local_tempdir(envir = envir)
  src <- lc_save(objs, file.path(dir, "objects.RData"))
  list(dir = dir, src = src, ref = load_objects(src))
}

# Run `routes` for every object of the fixture: one expectation per object
# and route. Prints one line per route: how many objects came back
# identical().
lc_expect_routes <- function(fx, routes, cli = NULL) {
  work <- file.path(fx$dir, "work")
  dir.create(work, showWarnings = FALSE)
  for (route in routes) {
    n_ok <- 0L
    bad <- character()
    for (o in names(fx$ref)) {
      r <- lc_check_route(route, fx$src, o, fx$ref[[o]], work, cli)
      ok <- identical(r$status, "identical")
      if (ok) n_ok <- n_ok + 1L else bad <- c(bad, o)
      expect(ok, sprintf("%s, route %s (%s): %s: %s", o, route, lc_route_labels[[route]],
                         r$status, r$message))
    }
    cat(sprintf("\nlossless objects, route %s (%s): %d objects, %d identical, %d not%s\n",
                route, lc_route_labels[[route]], length(fx$ref), n_ok, length(bad),
                if (length(bad)) paste0(" (", paste(bad, collapse = ", "), ")") else ""))
  }
}

test_that("the objects of every kind are what they say they are", {
  # the fixture itself, so that the round-trip tests test what they claim
  ref <- lc_fixture()$ref
  expect_identical(Encoding(ref$df_latin1$x[[1]]), "latin1")
  expect_type(ref$df_date_integer$x, "integer")
  expect_type(ref$df_date_double$x, "double")
  expect_true(any(unclass(ref$df_date_fractional$x) %% 1 != 0, na.rm = TRUE))
  expect_null(attr(ref$df_posixct_no_tzone$x, "tzone"))
  expect_identical(attr(ref$df_posixct_empty_tz$x, "tzone"), "")
  expect_true(any(is.nan(unclass(ref$df_posixct_runif$x))))
  expect_true(any(is.na(ref$df_posixct_runif$x) & !is.nan(unclass(ref$df_posixct_runif$x))))
  # full-precision fractions: not whole microseconds
  us <- unclass(ref$df_posixct_runif$x) * 1e6
  expect_true(any(abs(us - round(us)) > 1e-3, na.rm = TRUE))
  expect_type(ref$df_difftime_secs_intstore$x, "integer")
  expect_identical(units(ref$df_difftime_weeks_frac$x), "weeks")
  expect_true(any(sapply(ref$df_list_null$l, is.null)))
  expect_s3_class(ref$df_nested_df$sub, "data.frame")
  expect_type(attr(ref$df_row_names, "row.names"), "character")
  expect_true("9007199254740993" %in% as.character(ref$df_integer64$x))
  expect_s3_class(ref$ts_mts, "mts")
  expect_identical(length(dim(ref$table_2d)), 2L)
  expect_identical(length(dim(ref$table_1d)), 1L)
  expect_identical(names(dimnames(ref$mat_double_named_dimnames)), c("rows", "cols"))
  expect_identical(comment(ref$vec_comment), "a comment")
})

test_that("every kind of object comes back identical() through the C stream, IPC and Parquet (routes a, a.rds, c, d, p)", {
  fx <- lc_fixture()
  lc_expect_routes(fx, c("a", "a.rds", "c", "d", "p"))
})

test_that("every kind of object comes back identical() through an arrow R Table (route b)", {
  skip_if_not_installed("arrow", minimum_version = NULL)
  fx <- lc_fixture()
  lc_expect_routes(fx, "b")
})

test_that("every kind of object comes back identical() through the command line (routes e, e.rds)", {
  cli <- cli_binary()
  fx <- lc_fixture()
  lc_expect_routes(fx, c("e", "e.rds"), cli)
})

test_that("a few hundred thousand rows (converted on several threads) come back identical() through every route", {
  objs <- lc_big_objects()
  fx <- lc_fixture(objs)
  expect_identical(nrow(fx$ref$big_df), 300000L)
  lc_expect_routes(fx, c("a", "a.rds", "c", "d", "p"))
  if (!requireNamespace("arrow", quietly = TRUE)) {
    skip("arrow R is not installed: route b (arrow R Table) of the large objects not run")
  }
  lc_expect_routes(fx, "b")
  lc_expect_routes(fx, c("e", "e.rds"), cli_binary())
})

test_that("an object saved alone in an .rds file comes back identical() (object = NULL and by name)", {
  dir <- local_tempdir()
  objs <- lc_objects()
  picks <- c("df_every_kind", "df_posixct_runif", "vec_integer", "mat_double_named_dimnames",
             "ts_mts", "table_2d")
  for (nm in picks) {
    rds <- file.path(dir, paste0(nm, ".rds"))
    saveRDS(objs[[nm]], rds)
    ref <- readRDS(rds)
    out <- file.path(dir, "out.rds")
    got <- tryCatch({
      arrow_to_rdata(rdata_to_arrow(rds), out, name = nm)
      readRDS(out)
    }, error = function(e) e)
    expect(!inherits(got, "error") && lc_identical(got, ref), sprintf(
      "%s.rds via rdata_to_arrow(object = NULL) -> arrow_to_rdata(<.rds>): %s", nm,
      if (inherits(got, "error")) conditionMessage(got) else lc_first_diff(got, ref)))
    ipc <- file.path(dir, "x.arrows")
    out2 <- file.path(dir, "out2.RData")
    got <- tryCatch({
      rdata_to_ipc(rds, ipc, format = "stream")
      ipc_to_rdata(ipc, out2, name = nm)
      lc_read_back(out2, nm)
    }, error = function(e) e)
    expect(!inherits(got, "error") && lc_identical(got, ref), sprintf(
      "%s.rds via rdata_to_ipc(object = NULL) -> ipc_to_rdata(): %s", nm,
      if (inherits(got, "error")) conditionMessage(got) else lc_first_diff(got, ref)))
    r <- lc_check_route("a", rds, nm, ref, dir)
    expect(identical(r$status, "identical"),
           sprintf("%s.rds, route a with object = \"%s\": %s", nm, nm, r$message))
  }
})

# ---------------------------------------------------------------------------
# Part 2: every object of the peer corpus

# Self-contained (runs in a child R process): every object of every file in
# `files` through `routes`, as lc_run_in_children() runs it: the rows
# (file, object, route, status = "identical", "different", "error",
# "not_convertible" or "unloadable", message) are saved file by file.
lc_corpus_child <- function(files, root, progress, helper, cli, routes) {
  h <- new.env()
  for (p in helper) sys.source(p, envir = h)
  quietly <- function(expr) suppressMessages(suppressWarnings(expr))
  # each file's rows are saved as soon as it is done, so that they survive
  # a crash of this process (see lc_run_in_children())
  rows <- h$corpus_rows(root, progress)
  add <- rows$add
  work <- tempfile("lc-corpus-")
  dir.create(work)
  for (f in files) {
    rows$flush()
    opened <- h$corpus_open(f, progress)
    env <- opened$env
    kind <- opened$kind
    if (is.null(kind)) {
      add(f, NA_character_, NA_character_, "unloadable", "R cannot load() or readRDS() it")
      next
    }
    objs <- tryCatch(rdarrow::rdata_objects(f)$name, error = function(e) e)
    if (inherits(objs, "error")) {
      for (route in routes) {
        add(f, NA_character_, route, "error", paste("rdata_objects():", conditionMessage(objs)))
      }
      next
    }
    for (o in objs) {
      probe <- tryCatch(quietly(rdarrow::rdata_to_arrow(f, object = o)),
                        rdarrow_error = function(e) e, error = function(e) e)
      if (inherits(probe, "error")) {
        st <- if (inherits(probe, "rdarrow_error")) "not_convertible" else "error"
        for (route in routes) {
          add(f, o, route, st, paste0(class(probe)[[1]], ": ", conditionMessage(probe)))
        }
        next
      }
      rm(probe)
      if (kind == "rda" && !exists(o, envir = env, inherits = FALSE)) {
        for (route in routes) {
          add(f, o, route, "error", "rdata_objects() lists an object that load() does not give")
        }
        next
      }
      # (get() of an object that is R's empty symbol gives that symbol; it
      # is compared inside lc_check_route() without being evaluated)
      nm <- if (kind == "rds") "value" else o
      for (route in routes) {
        d <- file.path(work, route)
        dir.create(d, showWarnings = FALSE)
        r <- tryCatch(
          h$lc_check_route(route, f, o, get(nm, envir = env, inherits = FALSE), d, cli),
          error = function(e) list(status = "error", message = paste(
            "the check itself failed:", conditionMessage(e))))
        add(f, o, route, r$status, r$message)
      }
    }
  }
  unlink(work, recursive = TRUE)
  rows$flush()
  invisible(NULL)
}

test_that("every object of the peer corpus that converts comes back identical() (routes a, c, e, p)", {
  dir <- corpus_dir("the peer corpus round trips are not run")
  skip_if_not_installed("callr")
  # without the command line (no cargo), routes a and c still run
  no_cli <- NULL
  cli <- tryCatch(cli_binary(), skip = function(e) {
    no_cli <<- conditionMessage(e)
    NULL
  })
  root <- paste0(dir, "/")
  files <- corpus_files(dir)
  expect_gt(length(files), 100L)
  routes <- if (is.null(cli)) c("a", "c", "p") else c("a", "c", "e", "p")
  res <- lc_run_in_children(lc_corpus_child, files, root,
                            list(helper = lc_helper_files(), cli = cli, routes = routes))
  unloadable <- unique(res$file[res$status == "unloadable"])
  crashed <- res[res$route %in% "all", , drop = FALSE]
  for (route in routes) {
    r <- res[res$route %in% route, , drop = FALSE]
    tried <- r$status %in% c("identical", "different", "error")
    cat(sprintf(paste0("\nlossless corpus, route %s (%s): %d files (%d not loadable by this R, ",
                       "%d crashed), %d objects tried, %d identical, %d not identical or failed, ",
                       "%d not convertible\n"),
                route, lc_route_labels[[route]], length(files), length(unloadable), nrow(crashed),
                sum(tried), sum(r$status == "identical"),
                sum(r$status %in% c("different", "error")), sum(r$status == "not_convertible")))
  }
  # the corpus holds many objects that convert, and most come back identical
  expect_gt(sum(res$status == "identical"), 100L)
  bad <- res[res$status %in% c("different", "error"), , drop = FALSE]
  expect(nrow(bad) == 0L, sprintf(
    "%d round trips of peer corpus objects did not give back an identical() object:\n%s",
    nrow(bad), paste(sprintf("  %s [%s] route %s: %s: %s", bad$file, bad$object, bad$route,
                             bad$status, bad$message), collapse = "\n")))
  if (is.null(cli)) skip(paste("route e (the command line) was not run:", no_cli))
})

# ---------------------------------------------------------------------------
# Part 4: which object is converted when none is named

# rdata_to_ipc(src) (no object named) -> ipc_to_rdata(<.rds>) -> readRDS()
# must give back `ref`; `what` starts the failure message.
lc_expect_ipc_object_null <- function(src, ref, dir, out, what) {
  ipc <- file.path(dir, "v.arrow")
  out <- file.path(dir, out)
  got <- tryCatch({
    rdata_to_ipc(src, ipc)
    ipc_to_rdata(ipc, out)
    readRDS(out)
  }, error = function(e) e)
  expect(!inherits(got, "error") && lc_identical(got, ref), sprintf(
    "%s: %s", what,
    if (inherits(got, "error")) conditionMessage(got) else lc_first_diff(got, ref)))
}

test_that("object = NULL takes the file's only convertible object", {
  dir <- local_tempdir()
  # one integer vector and a function (which does not convert)
  only_vec <- c(5L, NA, -3L)
  a_function <- function(x) x + 1
  f <- file.path(dir, "vec_and_fun.RData")
  save(only_vec, a_function, file = f)
  ref <- load_objects(f)$only_vec
  s <- tryCatch(rdata_to_arrow(f), error = function(e) e)
  expect(!inherits(s, "error"), sprintf(
    "rdata_to_arrow() of a file with one vector and a function: %s",
    if (inherits(s, "error")) conditionMessage(s) else ""))
  if (!inherits(s, "error")) {
    expect_identical(attr(s, "rdarrow_object"), "only_vec")
    out <- file.path(dir, "out.RData")
    arrow_to_rdata(s, out, name = "only_vec")
    got <- lc_read_back(out, "only_vec")
    expect(lc_identical(got, ref), paste("the vector chosen by object = NULL:",
                                         lc_first_diff(got, ref)))
  }
  # rdata_to_ipc() chooses the same way
  lc_expect_ipc_object_null(f, ref, dir, "v.rds",
                            "rdata_to_ipc() of a file with one vector and a function")
})

test_that("an .rds file holding one vector converts with object = NULL (rdata_to_ipc() too)", {
  dir <- local_tempdir()
  rds <- file.path(dir, "one_vector.rds")
  saveRDS(c(1.5, NA, -0, NaN, 1e300), rds)
  ref <- readRDS(rds)
  s <- tryCatch(rdata_to_arrow(rds), error = function(e) e)
  expect(!inherits(s, "error"), paste("rdata_to_arrow(<.rds of a vector>):",
                                      if (inherits(s, "error")) conditionMessage(s) else ""))
  lc_expect_ipc_object_null(rds, ref, dir, "out.rds",
                            "rdata_to_ipc(<.rds of a vector>) -> ipc_to_rdata()")
})

test_that("object = NULL with several convertible objects is an error listing them", {
  dir <- local_tempdir()
  alpha_vec <- 1:3
  beta_mat <- matrix(c(1.5, 2, 3, 4), 2L)
  gamma_fun <- function() NULL
  f <- file.path(dir, "several.RData")
  save(alpha_vec, beta_mat, gamma_fun, file = f)
  for (call in list(function() rdata_to_arrow(f),
                    function() rdata_to_ipc(f, file.path(dir, "x.arrow")))) {
    e <- tryCatch(call(), error = function(e) e)
    expect_s3_class(e, "rdarrow_error")
    msg <- if (inherits(e, "error")) conditionMessage(e) else ""
    expect_match(msg, "alpha_vec", fixed = TRUE)
    expect_match(msg, "beta_mat", fixed = TRUE)
    # a function is not a candidate
    expect_no_match(msg, "gamma_fun", fixed = TRUE)
  }
  expect_false(file.exists(file.path(dir, "x.arrow")))
})
