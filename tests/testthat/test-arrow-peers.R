# Every data frame of the peer corpus (RDARROW_PEERS_DIR) through
# rdata_to_arrow() and pyarrow. The conversions run in a child R process so
# that a crash is reported (with its file) instead of ending the test run.

# Self-contained (it runs in a child process; `helper` is the path of
# helper-corpus.R, which it sources): check the data frames of `files`,
# appending each file's path to `progress` before working on it.
# Returns a data frame: file, object, status ("ok", "tolerated", "failure"),
# message; files that R itself cannot load are "unloadable".
peer_check_files <- function(files, root, progress, helper) {
  h <- new.env()
  sys.source(helper, envir = h)
  pa <- reticulate::import("pyarrow", convert = FALSE)
  py_names_of <- reticulate::py_eval("lambda t: [str(n) for n in t.schema.names]", convert = TRUE)
  import_stream <- function(s) {
    addr <- reticulate::py_eval(sprintf("int(%s)", rdarrow:::xptr_address_impl(s)), convert = FALSE)
    pa$RecordBatchReader$`_import_from_c`(addr)$read_all()
  }
  quietly <- function(expr) suppressMessages(suppressWarnings(expr))
  is_df <- function(x) isTRUE(tryCatch(quietly(inherits(x, "data.frame")), error = function(e) FALSE))
  # Columns that arrow R cannot convert either: S4 objects, functions,
  # environments, language objects, and list columns whose elements do not
  # share one type; looked for in nested data frame columns too.
  unconvertible <- function(df, prefix = "") {
    out <- character()
    for (j in seq_along(df)) {
      x <- df[[j]]
      nm <- paste0(prefix, names(df)[[j]])
      if (is_df(x)) {
        out <- c(out, unconvertible(x, paste0(nm, "$")))
      } else if (isS4(x) || is.function(x) || is.environment(x) || is.language(x)) {
        out <- c(out, nm)
      } else if (is.list(x)) {
        items <- Filter(Negate(is.null), x)
        sig <- unique(vapply(items, function(v) paste(typeof(v), paste(class(v), collapse = "/")), ""))
        nested <- vapply(items, function(v) is.list(v) || isS4(v), TRUE)
        if (length(sig) > 1L || any(nested)) out <- c(out, nm)
      }
    }
    out
  }
  row <- function(f, object, status, message) {
    data.frame(file = sub(root, "", f, fixed = TRUE), object = object, status = status,
               message = message, stringsAsFactors = FALSE)
  }
  res <- list()
  for (f in files) {
    opened <- h$corpus_open(f, progress)
    env <- opened$env
    kind <- opened$kind
    if (is.null(kind)) {
      res[[length(res) + 1L]] <- row(f, NA_character_, "unloadable", "")
      next
    }
    r_dfs <- Filter(function(n) is_df(get(n, envir = env)), ls(env, all.names = TRUE))
    if (!length(r_dfs)) next
    objs <- tryCatch(rdarrow::rdata_objects(f), error = function(e) e)
    if (inherits(objs, "error")) {
      res[[length(res) + 1L]] <- row(f, NA_character_, "failure",
                                     paste("rdata_objects():", conditionMessage(objs)))
      next
    }
    cand <- objs$name[grepl("(^|/)data\\.frame(/|$)", objs$class)]
    if (kind == "rda" && !setequal(cand, r_dfs)) {
      res[[length(res) + 1L]] <- row(f, NA_character_, "failure", sprintf(
        "rdata_objects() lists data frames {%s}, load() gives {%s}",
        paste(cand, collapse = ", "), paste(r_dfs, collapse = ", ")))
    }
    if (kind == "rds" && length(cand) != 1L) {
      res[[length(res) + 1L]] <- row(f, NA_character_, "failure",
                                     "rdata_objects() does not list the .rds data frame")
      next
    }
    targets <- as.list(intersect(cand, if (kind == "rds") cand else r_dfs))
    # an .rds file is also converted without naming its object
    if (kind == "rds") targets <- c(targets, list(NULL))
    for (nm in targets) {
      df <- if (kind == "rds") get("value", envir = env) else get(nm, envir = env)
      label <- if (is.null(nm)) "<object = NULL>" else nm
      out <- tryCatch({
        # a data frame whose row names disagree with its columns converts
        # by its columns (as arrow R does), with a warning
        lens <- vapply(unclass(df), NROW, 1L)
        malformed <- length(lens) > 0L && all(lens == lens[[1]]) && lens[[1]] != nrow(df)
        want_rows <- if (malformed) lens[[1]] else nrow(df)
        warned <- FALSE
        s <- withCallingHandlers(rdarrow::rdata_to_arrow(f, object = nm), rdarrow_warning = function(w) {
          warned <<- TRUE
          invokeRestart("muffleWarning")
        })
        tab <- import_stream(s)
        tab$validate(full = TRUE)
        nrow_tab <- reticulate::py_to_r(tab$num_rows)
        names_tab <- unlist(py_names_of(tab))
        want <- names(df)
        want[is.na(want)] <- "NA"
        if (!identical(as.numeric(nrow_tab), as.numeric(want_rows))) {
          list("failure", sprintf("pyarrow has %s rows, R's columns have %d", format(nrow_tab), want_rows))
        } else if (!identical(warned, malformed)) {
          list("failure", sprintf("rdarrow_warning given: %s, row names disagree with the columns: %s", warned, malformed))
        } else if (!identical(enc2utf8(names_tab), enc2utf8(want))) {
          list("failure", sprintf("column names {%s}, R has {%s}",
                                  paste(names_tab, collapse = ", "), paste(want, collapse = ", ")))
        } else {
          list("ok", "")
        }
      }, rdarrow_error = function(e) {
        # a malformed data frame (columns not as long as its row names say)
        # is not a data frame arrow R could convert either
        lens <- vapply(unclass(df), NROW, 1L)
        if (any(lens != nrow(df)) && inherits(e, "rdarrow_error_corrupt")) {
          return(list("tolerated", sprintf(
            "%s [malformed in R: %d rows, columns of lengths %s]", conditionMessage(e),
            nrow(df), paste(unique(lens), collapse = "/"))))
        }
        if (!inherits(e, "rdarrow_error_unsupported")) {
          return(list("failure", paste0(class(e)[[1]], ": ", conditionMessage(e))))
        }
        bad <- unconvertible(df)
        if (length(bad)) {
          list("tolerated", sprintf("%s [columns arrow R cannot convert: %s]",
                                    conditionMessage(e), paste(bad, collapse = ", ")))
        } else {
          list("failure", paste0(class(e)[[1]], ": ", conditionMessage(e)))
        }
      }, error = function(e) {
        list("failure", paste0(class(e)[[1]], ": ", conditionMessage(e)))
      })
      res[[length(res) + 1L]] <- row(f, label, out[[1]], out[[2]])
    }
  }
  if (length(res)) do.call(rbind, res) else row(character(), character(), character(), character())
}


# Run peer_check_files() in child processes; a crash becomes a failure row
# for the file being converted, and the run goes on with the next file.
run_peer_checks <- function(files, root) {
  progress <- withr::local_tempfile()
  results <- list()
  todo <- files
  while (length(todo)) {
    file.create(progress)
    out <- tryCatch(
      callr::r(peer_check_files, args = list(todo, root, progress, corpus_helper_file()),
               env = c(callr::rcmd_safe_env(),
                       RETICULATE_PYTHON = Sys.getenv("RETICULATE_PYTHON"),
                       TZ = "UTC")),
      error = function(e) e
    )
    if (!inherits(out, "error")) {
      results[[length(results) + 1L]] <- out
      break
    }
    seen <- readLines(progress)
    crashed <- if (length(seen)) seen[[length(seen)]] else todo[[1]]
    results[[length(results) + 1L]] <- data.frame(
      file = sub(root, "", crashed, fixed = TRUE), object = NA_character_, status = "failure",
      message = paste("the R process died:", conditionMessage(out)),
      stringsAsFactors = FALSE)
    todo <- todo[-seq_len(match(crashed, todo))]
  }
  do.call(rbind, results)
}

test_that("every data frame in the peer corpus converts and imports into pyarrow", {
  dir <- corpus_dir("the peer corpus conversions into pyarrow are not run")
  skip_if_no_pyarrow()
  skip_if_not_installed("callr")
  root <- paste0(dir, "/")
  files <- corpus_files(dir)
  expect_gt(length(files), 0L)

  res <- run_peer_checks(files, root)
  n_ok <- sum(res$status == "ok")
  tolerated <- res[res$status == "tolerated", , drop = FALSE]
  failures <- res[res$status == "failure", , drop = FALSE]
  message(sprintf(
    "peer corpus: %d files, %d unloadable by R, %d data frames converted, %d tolerated, %d failed",
    length(files), sum(res$status == "unloadable"), n_ok, nrow(tolerated), nrow(failures)))
  if (nrow(tolerated)) {
    message("tolerated (arrow R cannot convert these either):\n",
            paste(sprintf("  %s [%s]: %s", tolerated$file, tolerated$object, tolerated$message),
                  collapse = "\n"))
  }
  # the corpus holds data frames, and most of them must convert
  expect_gt(n_ok, 50L)
  failed <- sprintf("%s [%s]: %s", failures$file, failures$object, failures$message)
  expect(length(failed) == 0L, sprintf(
    "%d data frame conversions of the peer corpus failed:\n%s",
    length(failed), paste(failed, collapse = "\n")))
})
