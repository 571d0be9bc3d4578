# A writer killed (SIGKILL) in the middle of a write leaves the target as it
# was or as it was to be, whole, and nothing else: where the file system
# has unnamed files (Linux's O_TMPFILE) no file at all, else a temporary
# file that the next write into the folder removes once its writer is gone.

# The files in `dir` (hidden ones too).
files_in <- function(dir) sort(list.files(dir, all.files = TRUE, no.. = TRUE))

# Start a child R that builds `make` (code), says it is ready by creating
# `ready`, then runs `write` (code using `x`).
start_writer <- function(make, write, ready) {
  code <- paste(
    "suppressPackageStartupMessages(library(rdarrow))",
    sprintf("x <- %s", make),
    sprintf("file.create(%s)", deparse(ready)),
    write,
    sep = "; "
  )
  processx::process$new(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", code),
                        stdout = NULL, stderr = NULL)
}

# What the writer `p` holds open in `dir` (the links of its descriptors):
# the file it is writing, unnamed ("#123 (deleted)") or under a temporary
# name.
open_in <- function(p, dir) {
  fds <- list.files(sprintf("/proc/%d/fd", p$get_pid()), full.names = TRUE)
  links <- suppressWarnings(Sys.readlink(fds))
  links[startsWith(links, paste0(dir, "/"))]
}

test_that("a writer killed mid-write leaves the old file or the new one, whole, and no other file", {
  skip_on_cran()
  skip_if_not(dir.exists("/proc/self/fd"), "a system without /proc")
  dir <- normalizePath(local_tempdir())
  make <- "{ set.seed(1); data.frame(a = rnorm(6e6), b = sample.int(1000L, 6e6, TRUE), s = sample(letters, 6e6, TRUE)) }"
  new <- eval(parse(text = make))
  old <- data.frame(a = 1:3)
  cases <- list(
    list(target = "x.rds", write = "write_rds(x, target)"),
    list(target = "x.rds", write = "write_rds(x, target, compress = FALSE)"),
    list(target = "x.RData", write = "write_rdata(x, file = target, compress = 'bzip2')"),
    list(target = "x.qs2", write = "write_rds(x, target)")
  )
  read_back <- function(f) {
    if (endsWith(f, ".RData")) {
      e <- new.env()
      load(f, e)
      return(e$x)
    }
    if (endsWith(f, ".qs2")) return(read_rds(f))
    readRDS(f)
  }
  killed_mid_write <- 0L
  unnamed_seen <- FALSE
  delays <- c(0, 0.1, 0.4, 1)
  for (case in cases) {
    target <- file.path(dir, case$target)
    for (delay in delays) {
      x <- old
      if (endsWith(target, ".RData")) write_rdata(x, file = target) else write_rds(x, target)
      # (outside the folder: a writer may make it after the wait below)
      ready <- tempfile("writer-ready-")
      p <- start_writer(make, sub("target", deparse(target), case$write, fixed = TRUE), ready)
      # the write is under way once the writer holds a new file in the
      # folder (a bounded wait: a writer that ends first has written it)
      holding <- character()
      for (i in 1:2400) {
        if (!p$is_alive()) break
        holding <- setdiff(open_in(p, dir), c(target, ready))
        if (length(holding)) break
        Sys.sleep(0.025)
      }
      unlink(ready)
      unnamed <- length(holding) && all(grepl("^#[0-9]+ \\(deleted\\)$", basename(holding)))
      unnamed_seen <- unnamed_seen || unnamed
      Sys.sleep(delay)
      p$kill()
      p$wait()
      unlink(ready)
      back <- read_back(target)
      is_old <- identical(back, old)
      expect_true(is_old || identical(back, new), info = paste(case$write, delay))
      if (is_old) killed_mid_write <- killed_mid_write + 1L
      # an unnamed file goes with its writer: nothing is left at all
      if (unnamed) expect_identical(files_in(dir), basename(target), info = paste(case$write, delay))
      # the next write into the folder leaves only its file and the target
      other <- file.path(dir, "other.rds")
      write_rds(old, other)
      expect_identical(files_in(dir), sort(c(basename(target), "other.rds")),
                       info = paste(case$write, delay))
      expect_identical(readRDS(other), old)
      unlink(c(other, target))
    }
  }
  # the kills landed in the middle of writes (the writer had its file
  # open, and the old file stayed)
  expect_gt(killed_mid_write, 0L)
  if (Sys.info()[["sysname"]] == "Linux") expect_true(unnamed_seen)
})

test_that("a write removes the temporary files of writers no longer alive, and only those", {
  skip_on_cran()
  skip_on_os("windows")
  dir <- normalizePath(local_tempdir())
  # a process that has ended, and one that runs
  gone <- processx::process$new("true")
  gone$wait()
  running <- processx::process$new("sleep", "60")
  on.exit(running$kill(), add = TRUE)
  litter <- c(
    dead = sprintf(".x.rds.rdarrow-%d.tmp", gone$get_pid()),
    dead_other = sprintf(".y.RData.rdarrow-%d.tmp", gone$get_pid()),
    alive = sprintf(".x.rds.rdarrow-%d.tmp", running$get_pid()),
    not_ours = sprintf("x.rds.rdarrow-%d.tmp", gone$get_pid()),
    not_ours2 = ".x.rds.rdarrow-12ab.tmp"
  )
  for (f in litter) writeBin(as.raw(1:100), file.path(dir, f))
  write_rds(1:3, file.path(dir, "x.rds"))
  expect_identical(files_in(dir), sort(c("x.rds", litter[c("alive", "not_ours", "not_ours2")])),
                   ignore_attr = TRUE)
  expect_identical(readRDS(file.path(dir, "x.rds")), 1:3)
})
