# Conformance against the peer corpus: ~690 files written by real R
# (2.7 .. 4.6, Windows and Linux, every compression) collected from the test
# suites of other readers of R's serialization format; SOURCES.md in the
# corpus describes each file. RDARROW_PEERS_DIR points at it (tools/test.sh
# sets it); without it the whole file is skipped.
#
# One test_that() per property, each looping over the corpus and collecting
# the failing files, so that one bug gives one failure listing its files.

peers_dir <- Sys.getenv("RDARROW_PEERS_DIR")
if (!nzchar(peers_dir) || !dir.exists(peers_dir)) {
  skip("RDARROW_PEERS_DIR is not set or is not a folder (tools/test.sh sets it)")
}
peers_dir <- normalizePath(peers_dir, mustWork = TRUE)

# ---- the corpus ----------------------------------------------------------

# Every data file: everything except documentation, expected-value tables
# and licenses. Raw serialize() streams have no extension.
peer_files <- function(dir) {
  all <- sort(list.files(dir, recursive = TRUE, full.names = TRUE, all.files = FALSE))
  base <- basename(all)
  not_data <- grepl("\\.(md|csv|txt)$", base, ignore.case = TRUE) |
    grepl("^(LICENSE|README)", base, ignore.case = TRUE)
  all[!not_data]
}

# Name used in messages: the path inside the corpus.
peer_label <- function(path) substring(path, nchar(peers_dir) + 2L)

# Name read_rdata() gives the single object of an .rds / raw stream.
peer_rds_name <- function(path) sub("\\.[^.]*$", "", basename(path))

peer_starts_with <- function(bytes, prefix) {
  prefix <- if (is.character(prefix)) charToRaw(prefix) else as.raw(prefix)
  length(bytes) >= length(prefix) && identical(bytes[seq_along(prefix)], prefix)
}

# Offset of the serialization stream proper: after the 5-byte "RDX3\n"-style
# header of a save() file, else 0.
peer_stream_start <- function(bytes) {
  if (peer_starts_with(bytes, "RD") && length(bytes) >= 5L && bytes[5L] == as.raw(0x0a)) 5L else 0L
}

# An ASCII stream ("A") whose lines end in CRLF (saveRDS(ascii = TRUE) on
# Windows writes through a text-mode connection).
peer_is_crlf_ascii <- function(bytes) {
  s <- peer_stream_start(bytes)
  length(bytes) >= s + 3L &&
    identical(bytes[s + 1:3], as.raw(c(0x41, 0x0d, 0x0a)))
}

# Drops each \r that comes right before a \n.
peer_strip_cr <- function(bytes) {
  n <- length(bytes)
  if (n < 2L) return(bytes)
  cr <- which(bytes[-n] == as.raw(0x0d) & bytes[-1L] == as.raw(0x0a))
  if (length(cr)) bytes[-cr] else bytes
}

# A raw .rdb (lazy-load database) entry: 4-byte big-endian length of the
# uncompressed stream, then a zlib stream (0x78 ..).
peer_is_rdb_entry <- function(file_bytes, decompressed) {
  length(file_bytes) > 6L &&
    file_bytes[5L] == as.raw(0x78) &&
    sum(as.numeric(file_bytes[1:4]) * 256^(3:0)) == length(decompressed)
}

peer_error_text <- function(x) {
  if (inherits(x, "rdarrow_error_value")) x$message else conditionMessage(x)
}

# What R itself reads from the file, in this session: load() into a fresh
# environment for save() files; lazyLoadDBfetch() (R's own reader of .rdb
# entries) for lazy-load entries; readRDS() for everything else.
# Returns list(ok, value = named list of objects, how, warnings, error).
peer_r_read <- function(path, file_bytes, decompressed) {
  warnings <- character()
  how <- "readRDS"
  value <- withCallingHandlers(
    tryCatch(
      {
        if (peer_starts_with(decompressed, "RD")) {
          how <- "load"
          env <- new.env(parent = emptyenv())
          nms <- load(path, envir = env)
          mget(nms, envir = env)
        } else if (peer_is_rdb_entry(file_bytes, decompressed)) {
          how <- "lazyLoadDBfetch"
          obj <- lazyLoadDBfetch(
            c(0L, length(file_bytes)), path, TRUE,
            function(x) stop("the entry holds a persistent reference")
          )
          stats::setNames(list(obj), peer_rds_name(path))
        } else {
          stats::setNames(list(readRDS(path)), peer_rds_name(path))
        }
      },
      error = function(e) e
    ),
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  )
  if (inherits(value, "error")) {
    return(list(ok = FALSE, how = how, warnings = warnings, error = conditionMessage(value)))
  }
  list(ok = TRUE, value = value, how = how, warnings = warnings)
}

# Does `x` hold anything identical() compares by identity (environments other
# than the global/base/empty/namespace/package ones, external pointers, weak
# references)? serialize() offers exactly those to its refhook.
peer_has_identity_refs <- function(x) {
  found <- FALSE
  serialize(x, NULL, refhook = function(obj) {
    found <<- TRUE
    NULL
  })
  found
}

# Compares one object (each wrapped in an unnamed list of one, so that even
# the empty symbol can be handled). Returns NULL when they match, else a
# short description of the difference.
peer_compare <- function(got, ref) {
  by_bytes <- peer_has_identity_refs(ref) || peer_has_identity_refs(got)
  same <- if (by_bytes) {
    identical(serialize(got, NULL), serialize(ref, NULL))
  } else {
    identical(got, ref)
  }
  if (same) return(NULL)
  ae <- tryCatch(
    suppressMessages(suppressWarnings(all.equal(got, ref))),
    error = function(e) paste("all.equal() failed:", conditionMessage(e))
  )
  desc <- if (isTRUE(ae)) {
    "all.equal() sees no difference"
  } else {
    paste(utils::head(ae, 3L), collapse = "; ")
  }
  if (by_bytes) {
    sa <- serialize(got, NULL)
    sb <- serialize(ref, NULL)
    m <- min(length(sa), length(sb))
    at <- which(sa[seq_len(m)] != sb[seq_len(m)])[1L]
    if (is.na(at)) at <- m + 1L
    desc <- sprintf(
      "serialize() differs (%d vs %d bytes, first difference at byte %d); %s",
      length(sa), length(sb), at, desc
    )
  }
  desc
}

peer_quietly <- function(expr) {
  warnings <- character()
  value <- withCallingHandlers(
    tryCatch(expr, error = function(e) e),
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  )
  value
}

# One failure listing every failing file (named vector: file -> problem).
expect_no_failing_files <- function(bad, what, n) {
  msg <- sprintf(
    "%d of %d corpus files %s:\n%s",
    length(bad), n, what,
    paste0("  ", names(bad), ": ", bad, collapse = "\n")
  )
  expect(length(bad) == 0L, msg)
  invisible(bad)
}

# Per-file facts shared by the tests: the file's bytes, the decompressed
# stream (rdarrow's) and what R itself reads. Computed once.
peer_cache <- new.env(parent = emptyenv())
peer_corpus <- function() {
  if (is.null(peer_cache$corpus)) {
    files <- peer_files(peers_dir)
    peer_cache$corpus <- lapply(files, function(path) {
      file_bytes <- readBin(path, "raw", file.size(path))
      dec <- rdarrow:::rdata_decompressed_impl(path)
      r <- if (is.raw(dec)) {
        peer_r_read(path, file_bytes, dec)
      } else {
        list(ok = FALSE, how = "none", warnings = character(),
             error = paste("rdata_decompressed_impl:", peer_error_text(dec)))
      }
      list(path = path, label = peer_label(path), file_bytes = file_bytes,
           decompressed = dec, r = r)
    })
  }
  peer_cache$corpus
}

# ---- properties ----------------------------------------------------------

test_that("the peer corpus is there", {
  corpus <- peer_corpus()
  expect_gt(length(corpus), 0L)
  labels <- vapply(corpus, `[[`, "", "label")
  expect_false(any(grepl("(^|/)SOURCES\\.md$", labels)))
})

test_that("every corpus file parses: rdata_objects() lists its objects", {
  corpus <- peer_corpus()
  bad <- character()
  for (x in corpus) {
    res <- peer_quietly(rdata_objects(x$path))
    if (inherits(res, "error")) {
      bad[[x$label]] <- sprintf("rdata_objects() failed <%s>: %s",
                                class(res)[1L], conditionMessage(res))
      next
    }
    if (!is.data.frame(res)) {
      bad[[x$label]] <- sprintf("rdata_objects() returned a %s, not a data frame",
                                class(res)[1L])
      next
    }
    # A save() of no objects is the one file that may list nothing.
    empty_save <- isTRUE(x$r$ok) && identical(x$r$how, "load") && length(x$r$value) == 0L
    if (empty_save) {
      if (nrow(res) != 0L) {
        bad[[x$label]] <- sprintf("load() finds no objects, rdata_objects() lists %d", nrow(res))
      }
    } else if (nrow(res) < 1L) {
      bad[[x$label]] <- "rdata_objects() returned 0 rows"
    }
  }
  expect_no_failing_files(bad, "do not parse", length(corpus))
})

test_that("every corpus file re-serializes byte for byte", {
  corpus <- peer_corpus()
  bad <- character()
  for (x in corpus) {
    dec <- x$decompressed
    if (!is.raw(dec)) {
      bad[[x$label]] <- paste("rdata_decompressed_impl() failed:", peer_error_text(dec))
      next
    }
    out <- rdarrow:::rdata_reserialize_impl(x$path, 10000L)
    if (!is.raw(out)) {
      bad[[x$label]] <- paste("rdata_reserialize_impl() failed:", peer_error_text(out))
      next
    }
    # Windows ASCII streams have CRLF line ends; the writer writes LF.
    expected <- if (peer_is_crlf_ascii(dec)) peer_strip_cr(dec) else dec
    if (!identical(out, expected)) {
      m <- min(length(out), length(expected))
      at <- which(out[seq_len(m)] != expected[seq_len(m)])[1L]
      if (is.na(at)) at <- m + 1L
      bad[[x$label]] <- sprintf(
        "%d bytes written vs %d decompressed; first difference at byte %d",
        length(out), length(expected), at
      )
    }
  }
  expect_no_failing_files(bad, "do not re-serialize identically", length(corpus))
})

test_that("read_rdata() gives what load()/readRDS() give, for every file R reads", {
  corpus <- peer_corpus()
  readable <- Filter(function(x) isTRUE(x$r$ok), corpus)
  n <- length(readable)
  how <- table(vapply(readable, function(x) x$r$how, ""))
  message(sprintf(
    "R %s reads %d of %d corpus files (%s)",
    getRversion(), n, length(corpus),
    paste(names(how), how, sep = ": ", collapse = ", ")
  ))
  expect_gte(n, 540L, label = sprintf("the number of corpus files R %s reads (%d)", getRversion(), n))

  bad <- character()
  for (x in readable) {
    ref <- x$r$value
    got <- peer_quietly(read_rdata(x$path))
    if (inherits(got, "error")) {
      bad[[x$label]] <- sprintf("read_rdata() failed <%s>: %s (R's %s() reads it)",
                                class(got)[1L], conditionMessage(got), x$r$how)
      next
    }
    if (!is.list(got) || !identical(names(got), names(ref))) {
      bad[[x$label]] <- sprintf(
        "names: read_rdata() gives [%s], %s() gives [%s]",
        paste(names(got), collapse = ", "), x$r$how, paste(names(ref), collapse = ", ")
      )
      next
    }
    diffs <- character()
    for (j in seq_along(ref)) {
      d <- peer_compare(unname(got[j]), unname(ref[j]))
      if (!is.null(d)) diffs <- c(diffs, sprintf("'%s': %s", names(ref)[j], d))
    }
    if (length(diffs)) {
      bad[[x$label]] <- paste0(
        "differs from ", x$r$how, "(): ", paste(diffs, collapse = " | "),
        if (length(x$r$warnings)) paste0(" [R warned: ", paste(unique(x$r$warnings), collapse = "; "), "]")
      )
    }
  }
  expect_no_failing_files(bad, "read differently from R", n)
})

test_that("with every character vector read lazily, read_rdata() still gives what R gives", {
  readable <- Filter(function(x) isTRUE(x$r$ok), peer_corpus())
  withr::local_options(rdarrow.lazy_strings = 0)
  bad <- character()
  for (x in readable) {
    got <- peer_quietly(read_rdata(x$path))
    if (inherits(got, "error")) {
      bad[[x$label]] <- sprintf("read_rdata() failed: %s", conditionMessage(got))
      next
    }
    ref <- x$r$value
    for (j in seq_along(ref)) {
      d <- peer_compare(unname(got[j]), unname(ref[j]))
      if (!is.null(d)) bad[[x$label]] <- sprintf("'%s': %s", names(ref)[j], d)
    }
  }
  expect_no_failing_files(bad, "read differently from R with lazy strings", length(readable))
})

# read_rdata() on the files R cannot read runs in a child R process, so that a
# crash is reported (naming the file) instead of ending the test run.
peer_read_in_child <- function(paths) {
  rscript <- file.path(R.home("bin"), if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript")
  script <- tempfile("peers-child-", fileext = ".R")
  on.exit(unlink(script), add = TRUE)
  writeLines(c(
    "args <- commandArgs(trailingOnly = TRUE)",
    "paths <- readLines(args[[1L]], encoding = 'UTF-8')",
    "out <- args[[2L]]",
    "suppressPackageStartupMessages(library(rdarrow))",
    "for (p in paths) {",
    "  cat(p, '\\tstart\\n', sep = '', file = out, append = TRUE)",
    "  res <- withCallingHandlers(",
    "    tryCatch({",
    "      v <- read_rdata(p)",
    "      nm <- rdata_objects(p)$name",
    "      if (!is.list(v) || !identical(names(v), nm)) {",
    "        paste0('ok-mismatch\\tread_rdata() names [', paste(names(v), collapse = ', '),",
    "               '] but rdata_objects() lists [', paste(nm, collapse = ', '), ']')",
    "      } else 'ok'",
    "    }, error = function(e) {",
    "      paste0(if (inherits(e, 'rdarrow_error')) 'rdarrow_error' else 'other_error',",
    "             '\\t<', paste(class(e), collapse = '/'), '> ',",
    "             gsub('[\\r\\n\\t]+', ' ', conditionMessage(e)))",
    "    }),",
    "    warning = function(w) invokeRestart('muffleWarning'))",
    "  cat(p, '\\t', res, '\\n', sep = '', file = out, append = TRUE)",
    "}"
  ), script)
  env <- paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = .Platform$path.sep)))
  results <- character()
  todo <- paths
  while (length(todo)) {
    input <- tempfile("peers-in-")
    out <- tempfile("peers-out-")
    writeLines(todo, input, useBytes = TRUE)
    system2(rscript, c("--vanilla", shQuote(script), shQuote(input), shQuote(out)),
            stdout = FALSE, stderr = FALSE, env = env)
    lines <- if (file.exists(out)) readLines(out, encoding = "UTF-8") else character()
    unlink(c(input, out))
    fields <- strsplit(lines, "\t", fixed = TRUE)
    path <- vapply(fields, `[[`, "", 1L)
    status <- vapply(fields, function(f) paste(f[-1L], collapse = "\t"), "")
    done <- status != "start"
    results[path[done]] <- status[done]
    started <- path[!done & !(path %in% path[done])]
    if (length(started)) {
      # the child died while reading this file
      results[started[1L]] <- "crash\tthe R process reading it died"
    } else if (!length(lines)) {
      results[todo[1L]] <- "crash\tthe R process could not start or died at once"
    }
    todo <- setdiff(todo, names(results))
  }
  results[paths]
}

test_that("files R cannot read are still listed, and read_rdata() fails cleanly if at all", {
  corpus <- peer_corpus()
  unreadable <- Filter(function(x) !isTRUE(x$r$ok), corpus)
  if (!length(unreadable)) {
    succeed("R reads every corpus file")
    return(invisible())
  }
  bad <- character()
  for (x in unreadable) {
    res <- peer_quietly(rdata_objects(x$path))
    if (inherits(res, "error")) {
      bad[[x$label]] <- sprintf("rdata_objects() failed <%s>: %s",
                                class(res)[1L], conditionMessage(res))
    } else if (nrow(res) < 1L) {
      bad[[x$label]] <- "rdata_objects() lists no objects"
    }
  }
  paths <- vapply(unreadable, `[[`, "", "path")
  labels <- vapply(unreadable, `[[`, "", "label")
  results <- peer_read_in_child(paths)
  for (i in seq_along(paths)) {
    status <- results[[i]]
    if (status %in% c("ok", "rdarrow_error") || startsWith(status, "rdarrow_error\t")) next
    problem <- paste("read_rdata()", sub("\t", ": ", status, fixed = TRUE))
    label <- labels[[i]]
    bad[[label]] <- if (label %in% names(bad)) paste(bad[[label]], problem, sep = "; ") else problem
  }
  expect_no_failing_files(bad, "that R cannot read are mishandled", length(unreadable))
})
