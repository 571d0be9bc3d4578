# Helpers for the tests that work through the peer corpus (RDARROW_PEERS_DIR)
# file by file in child R processes: test-arrow-peers.R,
# test-lossless-circle.R and test-never-worse-than-arrow.R.
#
# Everything the child processes call uses base R only, no testthat: they
# sys.source() this file (corpus_helper_file()) and call these functions
# there (a function handed to callr::r() loses its environment, so the
# helpers of the parent are not visible to it).

# The corpus folder (normalized), or a skip saying which test needs it
# (CI always sets RDARROW_PEERS_DIR: tools/test.sh). Called in the test
# process only.
corpus_dir <- function(what) {
  dir <- Sys.getenv("RDARROW_PEERS_DIR")
  if (!nzchar(dir)) testthat::skip(sprintf("RDARROW_PEERS_DIR is not set: %s", what))
  if (!dir.exists(dir)) testthat::skip(sprintf("RDARROW_PEERS_DIR=%s does not exist", dir))
  normalizePath(dir)
}

# The corpus's data files (its expected-value, licence and notes files left
# out), sorted.
corpus_files <- function(dir) {
  files <- list.files(dir, recursive = TRUE, full.names = TRUE)
  skip <- "\\.(csv|md|txt|json|py|R|jl|rs|java)$|(^|/)(LICENSE|COPYING|README)[^/]*$"
  sort(files[!grepl(skip, files, ignore.case = TRUE)])
}

corpus_helper_file <- function() {
  normalizePath(file.path(testthat::test_path(), "helper-corpus.R"))
}

# Start on corpus file `f`: append its path to `progress` (so that the
# parent can tell which file a crashed child was working on), then read it
# the way R does: load() it, or else readRDS() it (into object "value").
# Returns list(env = the objects, kind = "rda", "rds", or NULL when R can
# do neither).
corpus_open <- function(f, progress) {
  cat(f, "\n", sep = "", file = progress, append = TRUE)
  quietly <- function(expr) suppressMessages(suppressWarnings(expr))
  env <- new.env()
  kind <- tryCatch({ quietly(load(f, envir = env)); "rda" }, error = function(e) NULL)
  if (is.null(kind)) {
    kind <- tryCatch({ assign("value", quietly(readRDS(f)), envir = env); "rds" },
                     error = function(e) NULL)
  }
  list(env = env, kind = kind)
}

# The result rows of a child run by lc_run_in_children() (file, object,
# route, status, message; the file relative to `root`): add() collects a
# row, flush() saves the rows collected so far into the folder
# paste0(progress, "-rows"), so that they survive a crash of the child.
corpus_rows <- function(root, progress) {
  rows <- list()
  list(
    add = function(f, object, route, status, message) {
      rows[[length(rows) + 1L]] <<- data.frame(
        file = sub(root, "", f, fixed = TRUE), object = object, route = route, status = status,
        message = message, stringsAsFactors = FALSE)
    },
    flush = function() {
      if (length(rows)) {
        saveRDS(do.call(rbind, rows),
                tempfile("rows-", tmpdir = paste0(progress, "-rows"), fileext = ".rds"))
        rows <<- list()
      }
    }
  )
}

# The Arrow schema of a stream as one line: each field's name and format
# string, its children in <>, at any depth (what "the same schema" means
# for tests/testthat/peer-schemas.tsv).
schema_signature <- function(schema) {
  sig <- function(s) {
    kids <- s$children
    paste0(s$name, ":", s$format,
           if (length(kids)) paste0("<", paste(vapply(kids, sig, ""), collapse = ","), ">") else "")
  }
  paste(vapply(schema$children, sig, ""), collapse = ";")
}
