# Many small files: the fixed cost of each call, against base R.
#
#   Rscript bench/small.R                 # 3 repetitions
#   Rscript bench/small.R --reps 5 --generated 3000
#
# Collections (each file read once per repetition; the median of the
# repetitions' totals is reported):
#   datasets    every data set of R's datasets package, one save() file each
#   peers       the peer corpus (../shared/corpus/peers, or RDARROW_PEERS_DIR):
#               the .rda/.RData/.rds files that load()/readRDS() read
#   generated   small data frames (5-60 rows, 6 columns), gzip .RData
#
# Per collection: load() (readRDS() for .rds) of each file, against
# read_rdata() (read_rds()), rdata_objects() and rdata_to_arrow() of each;
# then against one call of read_rdata() and rdata_objects() over all the
# files (read on all cores).
# Then the per-call medians on mtcars (300 calls each).
# Targets: reading in total <= 0.7x load(); listing <= 0.3x load(); per
# call within 2x of base R on mtcars.

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
reps <- bench_opt("reps", 3)
n_gen <- bench_opt("generated", 2000)
suppressPackageStartupMessages(library(rdarrow))
has_arrow <- requireNamespace("arrow", quietly = TRUE)

dir <- tempfile("rdarrow-small-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
cat(sprintf("rdarrow %s, R %s, %d repetitions, load average %s\n", packageVersion("rdarrow"),
            getRversion(), reps, load_avg()))

# ---- the collections ---------------------------------------------------------
dirs <- write_small_collections(dir, n_gen)
ds_dir <- dirs$datasets
gen_dir <- dirs$generated
peers_dir <- Sys.getenv("RDARROW_PEERS_DIR", file.path(script_dir, "..", "..", "shared", "corpus", "peers"))
peer_files <- if (dir.exists(peers_dir)) {
  list.files(peers_dir, pattern = "\\.(rda|RData|rdata|rds)$", recursive = TRUE, full.names = TRUE)
} else character()
is_rds <- function(f) grepl("\\.rds$", f, ignore.case = TRUE)
base_read <- function(f) if (is_rds(f)) readRDS(f) else load(f, envir = new.env())
ours_read <- function(f) if (is_rds(f)) read_rds(f) else read_rdata(f)
# only what base R and rdarrow both read (a benchmark, not a test)
usable <- function(files) {
  Filter(function(f) {
    isTRUE(tryCatch({ suppressWarnings(base_read(f)); ours_read(f); TRUE },
                    error = function(e) FALSE))
  }, files)
}
collections <- list(
  datasets = usable(list.files(ds_dir, full.names = TRUE)),
  peers = usable(peer_files),
  generated = list.files(gen_dir, full.names = TRUE)
)

# the seconds of `work()`, median over the repetitions; a collection read
# in a few milliseconds is read several times in each repetition (timers
# count milliseconds)
timed <- function(work) {
  once <- system.time(work())[["elapsed"]]
  inner <- max(1L, ceiling(0.25 / max(once, 1e-4)))
  times <- vapply(seq_len(reps), function(r) {
    invisible(gc())
    system.time(for (i in seq_len(inner)) work(), gcFirst = FALSE)[["elapsed"]] / inner
  }, 0)
  stats::median(times)
}
# the total seconds of `f` over `files`, one call per file
total <- function(files, f) timed(function() for (x in files) f(x))

cat("\nOne call per file (as a loop over load() is written):\n")
cat("\n| collection | files | MB | base R (s) | read (s) | read / base | list (s) | list / base | to Arrow (s) | to Arrow / base |\n")
cat("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
for (nm in names(collections)) {
  files <- collections[[nm]]
  if (!length(files)) {
    cat(sprintf("| %s | 0 | | | | | | | | |\n", nm))
    next
  }
  size <- sum(file.size(files))
  tb <- total(files, function(f) suppressWarnings(base_read(f)))
  tr <- total(files, ours_read)
  tl <- total(files, rdata_objects)
  # to Arrow: the files whose objects hold a table
  ta <- total(files, function(f) tryCatch(rdata_to_arrow(f), error = function(e) NULL))
  cat(sprintf("| %s | %d | %s | %.3f | %.3f | %.2f | %.3f | %.2f | %.3f | %.2f |\n",
              nm, length(files), mb(size), tb, tr, tr / tb, tl, tl / tb, ta, ta / tb))
}

# ---- one call over the collection ----------------------------------------------
cat("\nOne call over the collection: read_rdata(files) and rdata_objects(files), which read the files on all cores, against the loop over load()/readRDS():\n")
cat("\n| collection | files | base R loop (s) | read_rdata(files) (s) | ratio (target <= 0.7) | rdata_objects(files) (s) | ratio (target <= 0.3) |\n")
cat("|---|---:|---:|---:|---:|---:|---:|\n")
for (nm in names(collections)) {
  files <- collections[[nm]]
  if (!length(files)) next
  tb <- total(files, function(f) suppressWarnings(base_read(f)))
  tr <- timed(function() read_rdata(files))
  tl <- timed(function() rdata_objects(files))
  cat(sprintf("| %s | %d | %.4f | %.4f | %.2f | %.4f | %.2f |\n", nm, length(files), tb, tr, tr / tb, tl, tl / tb))
}

# ---- a folder to a dataset -----------------------------------------------------
if (has_arrow) {
  files <- collections$generated
  out1 <- file.path(dir, "ds-base"); out2 <- file.path(dir, "ds-ours")
  base_ds <- function() {
    unlink(out1, recursive = TRUE)
    dir.create(out1)
    # load() each file and write its frame as one Parquet file of the folder
    for (i in seq_along(files)) {
      e <- new.env()
      load(files[[i]], envir = e)
      arrow::write_parquet(e$df, file.path(out1, sprintf("part-%d.parquet", i)))
    }
  }
  ours_ds <- function() {
    unlink(out2, recursive = TRUE)
    rdata_to_dataset(files, out2)
  }
  t_base <- stats::median(vapply(seq_len(reps), function(r) system.time(base_ds())[["elapsed"]], 0))
  t_ours <- stats::median(vapply(seq_len(reps), function(r) {
    system.time(tryCatch(ours_ds(), error = function(e) {
      message("rdata_to_dataset: ", conditionMessage(e)); NULL
    }))[["elapsed"]]
  }, 0))
  # the command line's to-dataset over the same files (RDARROW_CLI, or the
  # release build in the cargo target directory)
  cli <- Sys.getenv("RDARROW_CLI", file.path(Sys.getenv("CARGO_TARGET_DIR", file.path(script_dir, "..", "src", "rust", "target")),
                                            "release", "rdarrow"))
  t_cli <- NA_real_
  if (file.exists(cli)) {
    out3 <- file.path(dir, "ds-cli")
    t_cli <- stats::median(vapply(seq_len(reps), function(r) {
      unlink(out3, recursive = TRUE)
      # the folder of the generated files (2000 paths exceed one shell
      # command's length)
      system.time(status <- system2(cli, c("to-dataset", shQuote(gen_dir), "-o", shQuote(out3))))[["elapsed"]]
    }, 0))
  } else {
    message("no command line at ", cli, " (cargo build --release -p rdarrow-cli, or set RDARROW_CLI): its row is left out")
  }
  cat(sprintf("\n| %d generated files to Parquet | seconds | ratio to base R |\n|---|---:|---:|\n", length(files)))
  cat(sprintf("| base R: load() + arrow::write_parquet() each | %.3f | 1.00 |\n", t_base))
  cat(sprintf("| rdarrow: rdata_to_dataset() | %.3f | %.2f |\n", t_ours, t_ours / t_base))
  if (!is.na(t_cli)) cat(sprintf("| rdarrow command line: to-dataset | %.3f | %.2f |\n", t_cli, t_cli / t_base))
}

# ---- per call on mtcars ----------------------------------------------------------
rds <- file.path(dir, "mtcars.rds"); saveRDS(mtcars, rds)
rda <- file.path(dir, "mtcars.RData"); save(mtcars, file = rda)
pc <- function(f, n = 300) {
  for (i in 1:20) f()
  t <- system.time(for (i in seq_len(n)) f())[["elapsed"]]
  1000 * t / n
}
calls <- list(
  c("readRDS(mtcars.rds)", "read_rds(mtcars.rds)"),
  c("load(mtcars.RData)", "read_rdata(mtcars.RData)"),
  c("load(mtcars.RData)", "rdata_objects(mtcars.RData)")
)
fun <- list(
  "readRDS(mtcars.rds)" = function() readRDS(rds),
  "read_rds(mtcars.rds)" = function() read_rds(rds),
  "load(mtcars.RData)" = function() load(rda, envir = new.env()),
  "read_rdata(mtcars.RData)" = function() read_rdata(rda),
  "rdata_objects(mtcars.RData)" = function() rdata_objects(rda)
)
cat("\n| per call (mean of 300) | base R (ms) | rdarrow (ms) | ratio |\n|---|---:|---:|---:|\n")
for (cl in calls) {
  b <- pc(fun[[cl[1]]]); o <- pc(fun[[cl[2]]])
  cat(sprintf("| %s vs %s | %.3f | %.3f | %.2f |\n", cl[2], cl[1], b, o, o / b))
}
# the command line, one process per call, against an Rscript that loads
# the file (what a shell script without rdarrow would run)
if (exists("cli") && file.exists(cli)) {
  per_process <- function(cmd, args, n = 20) {
    t <- system.time(for (i in seq_len(n)) system2(cmd, args, stdout = FALSE, stderr = FALSE))[["elapsed"]]
    1000 * t / n
  }
  rscript <- file.path(R.home("bin"), "Rscript")
  b <- per_process(rscript, c("--vanilla", "-e", shQuote(sprintf("load('%s')", rda))))
  cat("\n| command line, per call on mtcars.RData (mean of 20 processes) | ms | ratio to Rscript -e 'load()' |\n|---|---:|---:|\n")
  cat(sprintf("| Rscript --vanilla -e 'load(f)' | %.1f | 1.00 |\n", b))
  for (a in list(c("ls", rda), c("to-arrow", rda, "-o", file.path(dir, "mtcars.arrow")))) {
    o <- per_process(cli, shQuote(a))
    cat(sprintf("| rdarrow %s | %.1f | %.3f |\n", a[[1]], o, o / b))
  }
}
cat(sprintf("\nTargets: read / base <= 0.7, list / base <= 0.3 in total; per call <= 2. Load average after: %s\n",
            load_avg()))
