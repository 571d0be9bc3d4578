# Runs the testthat suite (tests/testthat) against the installed package in
# several R processes at once, each taking a share of the test files, and
# prints `testthat: N passed, N failed, N skipped` over all of them. Run by
# tools/test.sh from the repository root:
#
#   Rscript tools/testthat.R [jobs] [times-file]
#
# jobs defaults to the number of cores (at most 4). The files are shared out
# longest first by the seconds each took last time (times-file, kept in the
# cache; the size of each file when there is no record yet), so that the
# processes end together. Each process writes its own log, printed whole
# when it ends; the exit status is non-zero on any failure or error.

args <- commandArgs(trailingOnly = TRUE)
jobs <- if (length(args) >= 1L && nzchar(args[[1]])) as.integer(args[[1]]) else min(4L, parallel::detectCores())
if (is.na(jobs) || jobs < 1L) jobs <- 1L
times_file <- if (length(args) >= 2L) args[[2]] else ""

dir <- "tests/testthat"
files <- list.files(dir, pattern = "^test-.*\\.R$")
names <- sub("^test-(.*)\\.R$", "\\1", files)

# the seconds each file took last time, else its size
weight <- file.size(file.path(dir, files)) / 1000
known <- NULL
if (nzchar(times_file) && file.exists(times_file)) {
  known <- tryCatch(utils::read.delim(times_file, stringsAsFactors = FALSE), error = function(e) NULL)
  if (!is.null(known) && all(c("file", "seconds") %in% names(known))) {
    hit <- match(files, known$file)
    weight[!is.na(hit)] <- known$seconds[hit[!is.na(hit)]]
  }
}
jobs <- min(jobs, length(files))
load <- numeric(jobs)
group <- integer(length(files))
for (i in order(weight, decreasing = TRUE)) {
  g <- which.min(load)
  group[i] <- g
  load[g] <- load[g] + weight[i]
}

work <- tempfile("rdarrow-testthat-")
dir.create(work)
on.exit(unlink(work, recursive = TRUE), add = TRUE)

runner <- file.path(work, "runner.R")
writeLines(c(
  "args <- commandArgs(trailingOnly = TRUE)",
  "pattern <- readLines(args[[1]])",
  "out <- args[[2]]",
  "writeLines(as.character(Sys.getpid()), paste0(out, '.pid'))",
  "rows <- list()",
  "ok <- tryCatch({",
  "  res <- testthat::test_dir('tests/testthat', filter = pattern, package = 'rdarrow',",
  "    load_package = 'installed', stop_on_failure = FALSE, stop_on_warning = FALSE,",
  "    reporter = testthat::ProgressReporter$new(show_praise = FALSE, max_failures = Inf, update_interval = Inf))",
  "  for (t in res) {",
  "    kinds <- vapply(t$results, function(e) {",
  "      if (inherits(e, 'expectation_success')) 'passed'",
  "      else if (inherits(e, 'expectation_failure') || inherits(e, 'expectation_error')) 'failed'",
  "      else if (inherits(e, 'expectation_skip')) 'skipped' else 'other'",
  "    }, '')",
  "    rows[[length(rows) + 1L]] <- data.frame(file = t$file, seconds = t$real,",
  "      passed = sum(kinds == 'passed'), failed = sum(kinds == 'failed'), skipped = sum(kinds == 'skipped'))",
  "  }",
  "  TRUE",
  "}, error = function(e) { message('the test run itself failed: ', conditionMessage(e)); FALSE })",
  "tab <- if (length(rows)) do.call(rbind, rows) else data.frame(file = character(), seconds = numeric(), passed = integer(), failed = integer(), skipped = integer())",
  "if (!ok) tab <- rbind(tab, data.frame(file = '<run>', seconds = 0, passed = 0L, failed = 1L, skipped = 0L))",
  "utils::write.table(tab, out, sep = '\\t', row.names = FALSE, quote = FALSE)"
), runner)

rscript <- file.path(R.home("bin"), "Rscript")
started <- Sys.time()
procs <- lapply(seq_len(jobs), function(g) {
  # test_dir()'s filter: the group's names, regex characters escaped
  escaped <- gsub("([][{}().+*?^$|\\\\])", "\\\\\\1", names[group == g])
  list_file <- file.path(work, sprintf("filter-%d.txt", g))
  writeLines(paste0("^(", paste(escaped, collapse = "|"), ")$"), list_file)
  log <- file.path(work, sprintf("log-%d.txt", g))
  out <- file.path(work, sprintf("result-%d.tsv", g))
  system2(rscript, c("--no-init-file", shQuote(runner), shQuote(list_file), shQuote(out)),
                 stdout = log, stderr = log, wait = FALSE)
  list(log = log, out = out, files = files[group == g])
})
cat(sprintf("==> testthat: %d files in %d processes\n", length(files), jobs))

# wait for every process: each writes its process id first and its result
# table last; one that is gone without its table has died (it counts as a
# failure, and its log so far is shown)
alive <- function(g) {
  pid_file <- paste0(procs[[g]]$out, ".pid")
  if (!file.exists(pid_file)) return(TRUE) # not started yet
  pid <- suppressWarnings(as.integer(readLines(pid_file, warn = FALSE)[1]))
  is.na(pid) || isTRUE(tools::pskill(pid, 0L))
}
pending <- seq_len(jobs)
while (length(pending)) {
  Sys.sleep(1)
  done <- pending[vapply(pending, function(g) file.exists(procs[[g]]$out), TRUE)]
  died <- setdiff(pending, done)
  died <- died[!vapply(died, alive, TRUE)]
  # a table written as the process ended
  Sys.sleep(if (length(died)) 1 else 0)
  died <- died[!vapply(died, function(g) file.exists(procs[[g]]$out), TRUE)]
  for (g in c(done, died)) {
    Sys.sleep(0.2)
    cat(sprintf("---- process %d (%s) ----\n", g, paste(procs[[g]]$files, collapse = " ")))
    cat(readLines(procs[[g]]$log, warn = FALSE), sep = "\n")
    if (g %in% died) cat(sprintf("testthat: process %d ended without reporting its results\n", g))
  }
  done <- c(done, died)
  pending <- setdiff(pending, done)
  if (as.numeric(difftime(Sys.time(), started, units = "mins")) > 120) {
    cat("testthat: processes still running after 120 minutes\n")
    break
  }
}

tabs <- lapply(procs, function(p) {
  if (!file.exists(p$out)) {
    return(data.frame(file = "<lost>", seconds = 0, passed = 0L, failed = 1L, skipped = 0L))
  }
  utils::read.delim(p$out, stringsAsFactors = FALSE)
})
tab <- do.call(rbind, tabs)
# every file ran (a file whose tests were all skipped still reports them)
missing <- setdiff(files, tab$file)
if (length(missing)) {
  cat(sprintf("testthat: %d files did not run: %s\n", length(missing), paste(missing, collapse = " ")))
  tab <- rbind(tab, data.frame(file = "<not run>", seconds = 0, passed = 0L, failed = length(missing), skipped = 0L))
}
per_file <- stats::aggregate(seconds ~ file, data = tab[tab$file %in% files, , drop = FALSE], FUN = sum)
if (nzchar(times_file) && nrow(per_file)) {
  # files that did not report keep the seconds they took last time
  kept <- if (!is.null(known) && all(c("file", "seconds") %in% names(known))) known[!known$file %in% per_file$file & known$file %in% files, c("file", "seconds"), drop = FALSE] else NULL
  utils::write.table(rbind(per_file, kept), times_file, sep = "\t", row.names = FALSE, quote = FALSE)
}
per_file <- per_file[order(per_file$seconds, decreasing = TRUE), ]
cat("==> seconds per test file:\n")
cat(sprintf("  %7.1f  %s\n", per_file$seconds, per_file$file), sep = "")
cat(sprintf("==> testthat took %.0f s of wall time\n", as.numeric(difftime(Sys.time(), started, units = "secs"))))
counts <- colSums(tab[, c("passed", "failed", "skipped")])
cat(sprintf("testthat: %d passed, %d failed, %d skipped\n", counts[["passed"]], counts[["failed"]], counts[["skipped"]]))
quit(save = "no", status = if (counts[["failed"]] > 0L) 1L else 0L)
