# Every R vector the reader allocates stays protected until R holds the
# value: files of many shapes read through every reader route with R's
# collector run at every second allocation (gctorture2(2)), in a child R
# process (a fault kills it), each result compared with what R's own
# readers give (memory-session.R beside this file; the long session over
# the whole peer corpus under valgrind is `bash tools/memory-session.sh`).

skip_on_cran()

ms_script <- function() normalizePath(file.path(testthat::test_path(), "memory-session.R"))

# Run the session over `paths` in a fresh R; its output lines, the status
# attached.
ms_run <- function(paths, ...) {
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(ms_script()), ..., shQuote(paths)),
                                  stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  structure(out, status = if (is.null(status)) 0L else status)
}

# Files of many shapes: data frames with character row names, factors,
# long vectors (decoded straight into R vectors), lists, strings read
# lazily; gzip, bzip2, xz and none; versions 2 and 3; .rds and .RData.
ms_files <- function(dir) {
  set.seed(1976)
  n <- 12000L # long enough for vectors R allocates for the reader
  psid <- data.frame(
    participation = factor(sample(c("no", "yes"), 753, TRUE)),
    hours = sample(0:5000, 753, TRUE), youngkids = sample(0:3, 753, TRUE),
    wage = round(runif(753, 0, 25), 4), education = sample(5:17, 753, TRUE),
    city = factor(sample(c("no", "yes"), 753, TRUE)),
    stringsAsFactors = FALSE
  )
  for (j in 1:15) psid[[paste0("v", j)]] <- rnorm(753)
  big <- data.frame(id = seq_len(n), x = rnorm(n), f = factor(sample(letters, n, TRUE)),
                    s = sample(c(month.name, NA), n, TRUE),
                    long = paste0("a string longer than the lazy threshold ", seq_len(n)),
                    d = as.Date("2000-01-01") + seq_len(n), stringsAsFactors = FALSE)
  named <- data.frame(a = 1:300, b = runif(300), row.names = paste0("row", 1:300))
  objs <- list(psid = psid, big = big, named = named,
               vec = rnorm(3 * n), ints = sample.int(100L, 2 * n, TRUE),
               lst = list(a = 1:n, b = list(c = letters, d = runif(n)), e = "x"),
               mat = matrix(rnorm(4 * n), ncol = 4L, dimnames = list(NULL, c("w", "x", "y", "z"))))
  k <- 0L
  for (compress in c("gzip", "bzip2", "xz", "none")) {
    for (version in 2:3) {
      k <- k + 1L
      env <- list2env(objs)
      save(list = names(objs), envir = env, file = file.path(dir, sprintf("all-%s-v%d.RData", compress, version)),
           compress = if (compress == "none") FALSE else compress, version = version)
      o <- names(objs)[[(k - 1L) %% length(objs) + 1L]]
      saveRDS(objs[[o]], file.path(dir, sprintf("%s-%s-v%d.rds", o, compress, version)),
              compress = if (compress == "none") FALSE else compress, version = version)
    }
  }
  invisible(objs)
}

test_that("every reader route under gctorture2(2) gives what R's readers give, files of many shapes", {
  dir <- withr::local_tempdir()
  ms_files(dir)
  out <- ms_run(dir, "--torture", "2", "--gc-every", "1")
  summary <- grep("^memory session:", out, value = TRUE)
  expect_identical(attr(out, "status"), 0L, info = paste(out, collapse = "\n"))
  expect_length(summary, 1L)
  expect_match(summary, " 0 different", info = paste(out, collapse = "\n"))
  # each file, each route but the listing (and Arrow where the object
  # does not convert), compared
  n <- as.integer(sub(".*: (\\d+) files, (\\d+) routes identical.*", "\\2", summary))
  expect_gte(n, 16L * 4L)
})

test_that("a session over the peer corpus with collections between reads gives what R gives", {
  peers <- corpus_dir("the memory session over the peer corpus")
  files <- list.files(peers, pattern = "\\.(rds|rda|RData)$", recursive = TRUE, full.names = TRUE)
  files <- files[file.size(files) < 2e5]
  set.seed(4158)
  pick <- sample(files, min(40L, length(files)))
  out <- ms_run(pick, "--torture", "50", "--gc-every", "3")
  expect_identical(attr(out, "status"), 0L, info = paste(out, collapse = "\n"))
  expect_match(grep("^memory session:", out, value = TRUE), " 0 different")
})

test_that("qs2 and qdata files, salvaged reads and lazy strings under gctorture2(2) are what was written", {
  dir <- withr::local_tempdir()
  x <- data.frame(id = 1:5000, s = paste0("lazy string number ", 1:5000),
                  f = factor(sample(c("a", "b", NA), 5000, TRUE)), v = rnorm(5000),
                  row.names = paste0("r", 1:5000), stringsAsFactors = FALSE)
  script <- file.path(dir, "qs.R")
  writeLines(c(
    "suppressPackageStartupMessages(library(rdarrow))",
    "x <- readRDS(commandArgs(TRUE)[1])",
    "d <- commandArgs(TRUE)[2]",
    "ok <- TRUE",
    "for (ext in c('qs2', 'qdata', 'rds')) {",
    "  f <- file.path(d, paste0('x.', ext))",
    "  write_rds(x, f)",
    "  gctorture2(2)",
    "  a <- read_rds(f)",
    "  b <- read_rds(f, salvage = TRUE)",
    "  gctorture2(0)",
    "  ok <- ok && identical(a, x) && identical(b, x)",
    "  cat(ext, identical(a, x), identical(b, x), '\\n')",
    "}",
    "gctorture2(2)",
    "s <- read_rdata(file.path(d, 'x.rds'))[[1]]$s",
    "gctorture2(0)",
    "ok <- ok && identical(s, x$s)",
    "quit(status = if (ok) 0L else 1L)"
  ), script)
  saveRDS(x, file.path(dir, "ref.rds"))
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(script), shQuote(file.path(dir, "ref.rds")),
                                             shQuote(dir)), stdout = TRUE, stderr = TRUE))
  expect_null(attr(out, "status"), info = paste(out, collapse = "\n"))
  expect_length(grep("TRUE TRUE", out), 3L)
})
