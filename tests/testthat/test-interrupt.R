# A user interrupt (SIGINT, as Ctrl-C sends) during a long read or write
# stops the work, leaves no temporary or half-written file, and leaves the
# R session usable. Each case runs in a child R process.

interrupt_child <- function(code, dir) {
  script <- file.path(dir, "child.R")
  pidfile <- file.path(dir, "pid")
  out <- file.path(dir, "out.txt")
  writeLines(c(
    "suppressPackageStartupMessages(library(rdarrow))",
    sprintf("writeLines(as.character(Sys.getpid()), %s)", deparse(pidfile)),
    "res <- tryCatch({", code, "; 'completed' },",
    "  interrupt = function(e) 'interrupted',",
    "  rdarrow_error_interrupted = function(e) 'interrupted',",
    "  error = function(e) paste('error:', conditionMessage(e)))",
    "cat(res, '\\n', sep = '')",
    "cat('usable', sum(1:10), '\\n')"
  ), script)
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
          stdout = out, stderr = FALSE, wait = FALSE)
  for (i in 1:600) {
    if (file.exists(pidfile) && length(readLines(pidfile, warn = FALSE))) break
    Sys.sleep(0.05)
  }
  pid <- as.integer(readLines(pidfile))
  Sys.sleep(1.5)
  tools::pskill(pid, tools::SIGINT)
  for (i in 1:1200) {
    txt <- if (file.exists(out)) readLines(out, warn = FALSE) else character()
    if (any(startsWith(txt, "usable"))) break
    Sys.sleep(0.05)
  }
  txt
}

big_frame_file <- function(dir) {
  f <- file.path(dir, "big.RData")
  n <- 6e6
  big <- data.frame(x = seq_len(n) / 7, s = rep_len(c("alpha", "beta", "gamma"), n),
                    stringsAsFactors = FALSE)
  arrow_to_rdata(big, f, compress = "gzip", compression_level = 1)
  f
}

test_that("an interrupt stops a long read and the session stays usable", {
  skip_on_cran()
  skip_on_os("windows")
  dir <- tempfile("intr"); dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  f <- big_frame_file(dir)
  txt <- interrupt_child(sprintf("for (i in 1:50) x <- read_rdata(%s)", deparse(f)), dir)
  expect_true("interrupted" %in% txt, info = paste(txt, collapse = "\n"))
  expect_true("usable 55 " %in% txt, info = paste(txt, collapse = "\n"))
})

test_that("an interrupt stops a long write without leaving any file behind", {
  skip_on_cran()
  skip_on_os("windows")
  dir <- tempfile("intw"); dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  f <- big_frame_file(dir)
  outdir <- file.path(dir, "out"); dir.create(outdir)
  target <- file.path(outdir, "copy.RData")
  code <- sprintf("x <- read_rdata(%s)$big; for (i in 1:20) arrow_to_rdata(x, %s, compress = 'xz', compression_level = 9, threads = 1)",
                  deparse(f), deparse(target))
  txt <- interrupt_child(code, dir)
  expect_true("interrupted" %in% txt, info = paste(txt, collapse = "\n"))
  expect_true("usable 55 " %in% txt, info = paste(txt, collapse = "\n"))
  # no temporary file, and no half-written output
  left <- list.files(outdir, all.files = TRUE, no.. = TRUE)
  expect_false(any(grepl("\\.tmp$", left)), info = paste(left, collapse = ", "))
  if (file.exists(target)) {
    e <- new.env()
    expect_silent(load(target, e))
  }
})
