# "Never worse than arrow R": for a data frame `df` (as load() gives it),
#   a <- as.data.frame(arrow::as_arrow_table(rdata_to_arrow(f, o)))
# must equal arrow R's own round trip
#   b <- as.data.frame(arrow::arrow_table(df))
# or be closer to df: column by column identical() to b's or to df's (for
# numbers and times: no further from df than b's), df's character row
# names may be kept, and the classes are b's or df's (a data-frame column
# stays a data.frame, a tibble a tibble). Where arrow R fails on df,
# anything rdarrow gives is acceptable; where rdarrow fails and arrow R
# does not, that is a failure. See lc_never_worse_problems() in
# helper-lossless.R.

# Check the data frames `objs` (a named list): one expectation each.
# Returns the verdicts' statuses (named by object), after printing a
# summary line.
nw_expect_frames <- function(objs, label) {
  dir <- local_tempdir()
  src <- lc_save(objs, file.path(dir, "frames.RData"))
  ref <- load_objects(src)
  status <- character()
  for (o in names(ref)) {
    pair <- lc_never_worse_pair(src, o, ref[[o]])
    v <- lc_never_worse_verdict(pair, ref[[o]])
    status[[o]] <- v$status
    expect(v$status %in% c("same", "better", "arrow_fails"),
           sprintf("%s: rdarrow is worse than arrow R (%s): %s", o, v$status, v$message))
  }
  cat(sprintf("\nnever worse than arrow R, %s: %d data frames: %d same as arrow R, %d better, %d arrow R fails, %d worse, %d rdarrow fails where arrow R converts\n",
              label, length(status), sum(status == "same"), sum(status == "better"),
              sum(status == "arrow_fails"), sum(status == "worse"), sum(status == "rdarrow_fails")))
  invisible(status)
}

test_that("the comparison itself tells worse from better", {
  # the rule, checked on hand-made results so that the corpus test can fail
  df <- data.frame(x = c(1.25, NA, 3), s = c("u", "v", NA), stringsAsFactors = FALSE,
                   row.names = c("r1", "r2", "r3"))
  b <- data.frame(x = c(1.25, NA, 3), s = c("u", "v", NA), stringsAsFactors = FALSE)
  expect_length(lc_never_worse_problems(b, b, df), 0L)
  expect_length(lc_never_worse_problems(df, b, df), 0L)
  worse <- b
  worse$x <- c(1.5, NA, 3)
  expect_match(lc_never_worse_problems(worse, b, df), "values differ", all = FALSE)
  dropped <- b
  dropped$s <- factor(dropped$s)
  expect_gt(length(lc_never_worse_problems(dropped, b, df)), 0L)
  fewer <- b[1:2, ]
  expect_gt(length(lc_never_worse_problems(fewer, b, df)), 0L)
  tib <- df
  class(tib) <- c("tbl_df", "tbl", "data.frame")
  expect_gt(length(lc_never_worse_problems(tib, b, df)), 0L)
  v <- lc_never_worse_verdict(list(a = simpleError("no"), b = b), df)
  expect_identical(v$status, "rdarrow_fails")
  v <- lc_never_worse_verdict(list(a = simpleError("no"), b = simpleError("no either")), df)
  expect_identical(v$status, "arrow_fails")
})

test_that("every data frame of every kind converts no worse than arrow R does", {
  skip_if_not_installed("arrow")
  objs <- lc_objects()
  objs <- objs[vapply(objs, is.data.frame, TRUE)]
  objs$big_df <- lc_big_objects()$big_df
  nw_expect_frames(objs, "data frames of every kind")
})

test_that("a data.frame column comes back a data.frame (as arrow R gives it), a tibble as arrow R or as the original", {
  skip_if_not_installed("arrow")
  df <- data.frame(id = 1:3)
  df$sub <- data.frame(a = c(1.5, NA, 3), b = c("x", NA, "\u00e9"), stringsAsFactors = FALSE)
  objs <- list(nested = df)
  if (requireNamespace("tibble", quietly = TRUE)) {
    objs$tib <- tibble::tibble(a = 1:3, b = c("x", NA, "z"))
    objs$tib_nested <- tibble::tibble(a = 1:3, s = data.frame(u = c(1.5, 2, NA)))
  }
  dir <- local_tempdir()
  src <- lc_save(objs, file.path(dir, "frames.RData"))
  ref <- load_objects(src)
  for (o in names(ref)) {
    b <- as.data.frame(arrow::arrow_table(ref[[o]]))
    a <- tryCatch(as.data.frame(arrow::as_arrow_table(rdata_to_arrow(src, object = o))),
                  error = function(e) e)
    if (inherits(a, "error")) {
      fail(sprintf("%s: rdarrow fails where arrow R converts: %s", o, conditionMessage(a)))
      next
    }
    # (arrow R's as.data.frame() of a Table makes a tibble a data.frame, so
    # either class is right for the frame itself; the lossless routes of
    # test-lossless-circle.R keep the tibble)
    expect(identical(class(a), class(ref[[o]])) || identical(class(a), class(b)),
           sprintf("%s: class %s; the original is %s, arrow R gives %s", o, lc_class_str(a),
                   lc_class_str(ref[[o]]), lc_class_str(b)))
    for (j in names(ref[[o]])) {
      if (is.data.frame(ref[[o]][[j]])) {
        # arrow R gives a data.frame column back as a data.frame ...
        expect_identical(class(b[[j]]), class(ref[[o]][[j]]),
                         label = sprintf("arrow R's class of %s$%s", o, j))
        # ... and so must rdarrow (not a tibble)
        expect_identical(class(a[[j]]), class(ref[[o]][[j]]),
                         label = sprintf("class of %s$%s", o, j))
      }
    }
    p <- lc_never_worse_problems(a, b, ref[[o]])
    expect(length(p) == 0L, sprintf("%s: %s", o, paste(p, collapse = "; ")))
  }
})

# as.data.frame(as_arrow_table(rdata_to_arrow())) of the frame saved as
# `name`, or the error.
nw_convert <- function(src, name) {
  tryCatch(as.data.frame(arrow::as_arrow_table(rdata_to_arrow(src, object = name))),
           error = function(e) e)
}

test_that("a list column mixing integer and double vectors converts as arrow R converts it", {
  skip_if_not_installed("arrow")
  dbl_first <- data.frame(id = 1:3)
  dbl_first$l <- list(c(1.5, 2), 1:3, NULL)
  int_first <- data.frame(id = 1:3)
  int_first$l <- list(1:3, c(1.5, 2), NULL)
  dir <- local_tempdir()
  src <- lc_save(list(dbl_first = dbl_first, int_first = int_first),
                 file.path(dir, "mixed.RData"))
  ref <- load_objects(src)

  # double first: arrow R makes it a list of doubles, exactly
  b <- as.data.frame(arrow::arrow_table(ref$dbl_first))
  expect_identical(unclass(b$l)[[2]], c(1, 2, 3))
  a <- nw_convert(src, "dbl_first")
  expect(!inherits(a, "error"), paste("double first: rdarrow fails where arrow R converts:",
                                      if (inherits(a, "error")) conditionMessage(a) else ""))
  if (!inherits(a, "error")) expect_equal(a, b)

  # integer first: arrow R takes the first element's type, a list of
  # integers (1.5 becomes 1); rdarrow must convert it too, as arrow R does
  # or closer to the original (doubles)
  b <- as.data.frame(arrow::arrow_table(ref$int_first))
  expect_identical(unclass(b$l)[[2]], c(1L, 2L))
  a <- nw_convert(src, "int_first")
  expect(!inherits(a, "error"), paste("integer first: rdarrow fails where arrow R converts:",
                                      if (inherits(a, "error")) conditionMessage(a) else ""))
  if (!inherits(a, "error")) {
    p <- lc_never_worse_problems(a, b, ref$int_first)
    expect(length(p) == 0L, paste("integer first:", paste(p, collapse = "; ")))
  }
})

test_that("a data frame whose row names disagree with its columns converts by its columns, with a warning", {
  skip_if_not_installed("arrow")
  dir <- corpus_dir("vignette_row_names_mismatch_v3.rds is in the peer corpus")
  f <- list.files(dir, "^vignette_row_names_mismatch_v3\\.rds$", recursive = TRUE, full.names = TRUE)
  expect_length(f, 1L)
  if (length(f) != 1L) return()
  df <- readRDS(f)
  # the premise: R's row names say 3 rows, the columns hold 2 values each
  expect_identical(.row_names_info(df, 2L), 3L)
  expect_identical(unique(lengths(unclass(df))), 2L)
  b <- as.data.frame(arrow::arrow_table(df))
  expect_identical(nrow(b), 2L)
  s <- NULL
  err <- tryCatch({
    expect_warning(s <- rdata_to_arrow(f), "row", ignore.case = TRUE)
    NULL
  }, error = function(e) e)
  if (!is.null(err) || is.null(s)) {
    fail(paste("rdata_to_arrow() gave no stream:",
               if (!is.null(err)) paste0(class(err)[[1]], ": ", conditionMessage(err)) else ""))
    return()
  }
  a <- as.data.frame(arrow::as_arrow_table(s))
  expect_identical(dim(a), dim(b))
  p <- lc_never_worse_problems(a, b, df)
  expect(length(p) == 0L, paste(p, collapse = "; "))
  # the other ways in convert it the same way, with the same warning
  ipc <- local_tempfile(".arrow")
  expect_warning(rdata_to_ipc(f, ipc), "row", ignore.case = TRUE)
  if (file.exists(ipc)) {
    a2 <- as.data.frame(arrow::read_ipc_file(ipc, as_data_frame = FALSE))
    expect_identical(a2, a)
  }
})

# Self-contained (runs in a child R process): every data frame of `files`
# (the ones R can load), a against b, as lc_run_in_children() runs it: the
# rows (file, object, route = NA, status = see lc_never_worse_verdict() or
# "unloadable", message) are saved file by file.
nw_corpus_child <- function(files, root, progress, helper) {
  h <- new.env()
  for (p in helper) sys.source(p, envir = h)
  quietly <- function(expr) suppressMessages(suppressWarnings(expr))
  is_df <- function(x) isTRUE(tryCatch(quietly(inherits(x, "data.frame")), error = function(e) FALSE))
  # each file's rows are saved as soon as it is done, so that they survive
  # a crash of this process (see lc_run_in_children())
  rows <- h$corpus_rows(root, progress)
  add <- function(f, o, status, message) rows$add(f, o, NA_character_, status, message)
  for (f in files) {
    rows$flush()
    opened <- h$corpus_open(f, progress)
    env <- opened$env
    kind <- opened$kind
    if (is.null(kind)) {
      add(f, NA_character_, "unloadable", "R cannot load() or readRDS() it")
      next
    }
    nms <- ls(env, all.names = TRUE)
    nms <- nms[vapply(nms, function(n) {
      isTRUE(tryCatch(is_df(get(n, envir = env, inherits = FALSE)), error = function(e) FALSE))
    }, TRUE)]
    if (!length(nms)) next
    if (kind == "rds") {
      o <- tryCatch(rdarrow::rdata_objects(f)$name[[1]], error = function(e) e)
      if (inherits(o, "error")) {
        add(f, NA_character_, "rdarrow_fails", paste("rdata_objects():", conditionMessage(o)))
        next
      }
      targets <- stats::setNames("value", o)
    } else {
      targets <- stats::setNames(nms, nms)
    }
    for (o in names(targets)) {
      df <- get(targets[[o]], envir = env, inherits = FALSE)
      v <- tryCatch(h$lc_never_worse_verdict(h$lc_never_worse_pair(f, o, df), df),
                    error = function(e) list(status = "rdarrow_fails", message = paste(
                      "the comparison itself failed:", conditionMessage(e))))
      add(f, o, v$status, v$message)
    }
  }
  rows$flush()
  invisible(NULL)
}

test_that("every data frame of the peer corpus converts no worse than arrow R does", {
  dir <- corpus_dir("the peer corpus comparison with arrow R is not run")
  skip_if_not_installed("arrow")
  skip_if_not_installed("callr")
  root <- paste0(dir, "/")
  files <- corpus_files(dir)
  expect_gt(length(files), 100L)
  res <- lc_run_in_children(nw_corpus_child, files, root, list(helper = lc_helper_files()))
  res$status[res$route %in% "all"] <- "crashed"
  frames <- res[!res$status %in% c("unloadable", "crashed"), , drop = FALSE]
  n <- function(s) sum(frames$status == s)
  cat(sprintf(paste0("\nnever worse than arrow R, peer corpus: %d files (%d not loadable by this R, ",
                     "%d crashed), %d data frames: %d same as arrow R, %d better, %d arrow R fails, ",
                     "%d worse, %d rdarrow fails where arrow R converts\n"),
              length(files), sum(res$status == "unloadable"), sum(res$status == "crashed"),
              nrow(frames), n("same"), n("better"), n("arrow_fails"), n("worse"),
              n("rdarrow_fails")))
  expect_gt(nrow(frames), 50L)
  bad <- res[res$status %in% c("worse", "rdarrow_fails", "crashed"), , drop = FALSE]
  expect(nrow(bad) == 0L, sprintf(
    "%d data frames of the peer corpus convert worse than arrow R converts them:\n%s",
    nrow(bad), paste(sprintf("  %s [%s]: %s: %s", bad$file, bad$object, bad$status, bad$message),
                     collapse = "\n")))
})

test_that("every new kind of real-world object converts wherever arrow R converts it, and comes back closer", {
  skip_if_not_installed("arrow")
  skip_if_not_installed("nlme")
  lt <- as.POSIXlt(as.POSIXct(c("2020-01-01 10:00:00", "2021-06-01 12:30:00"), tz = "America/New_York"))
  bad <- c("ok", "a\xcc_b")
  Encoding(bad) <- "UTF-8"
  m <- data.frame(n = 1:2)
  m$y <- cbind(s = 1:2, f = 3:4)
  p <- data.frame(t = 1:2)
  p$lt <- lt
  fct <- factor(c("a", "b"))
  levels(fct) <- c(A = "a", B = "b")
  frames <- list(
    invalid_strings = data.frame(s = bad),
    matrix_column = m,
    posixlt_column = p,
    named_levels = data.frame(f = fct),
    grouped_data = nlme::Orthodont
  )
  arrow_converts <- 0L
  for (k in names(frames)) {
    df <- frames[[k]]
    b <- tryCatch(suppressWarnings(as.data.frame(arrow::arrow_table(df))), error = function(e) e)
    got <- rt_routes(df, c("stream", "table", "ipc_file", "parquet"))
    if (!inherits(b, "error")) {
      arrow_converts <- arrow_converts + 1L
      # arrow R converts it: rdarrow converts it too, and gives it back
      # as it was, which is at least as close as arrow R's
      expect(all(got == "ok"), sprintf("%s: arrow R converts it, rdarrow gives %s", k,
                                       paste(names(got), got, sep = " = ", collapse = ", ")))
    } else {
      expect(all(got == "ok"), sprintf("%s (arrow R fails): %s", k, paste(names(got), got, sep = " = ", collapse = ", ")))
    }
  }
  expect_gt(arrow_converts, 2L)
})
