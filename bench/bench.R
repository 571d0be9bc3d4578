# rdarrow benchmark: reading .RData files with rdarrow versus base R's load().
#
# What it measures
#   1. Inputs. A data frame of N rows (integer, two doubles, logical with
#      NAs, character drawn from 1000 distinct words, factor, Date, POSIXct
#      in UTC) is generated with a fixed seed and written with save() three
#      times: compress = "gzip" (R's default), "xz" and FALSE.
#   2. Time, for each of the three files (median of K repetitions, elapsed
#      seconds, gc() before each timing, files in the page cache; the
#      repetitions are interleaved across the methods, and the load average
#      is printed, because timings on a busy machine are not comparable):
#        load              base::load() into a fresh environment
#        rdata_objects     rdarrow::rdata_objects(): list the objects only
#        read_rdata        rdarrow::read_rdata(): the objects as R values
#        parse             rdarrow:::rdata_parse_impl(): decompress and
#                          decode the whole file in Rust, no R objects built
#        decompress        rdarrow:::rdata_decompress_impl(): decompression
#                          only, the floor for any reader of the file
#   3. Peak memory of parse. In a fresh Rscript child per file: VmRSS after
#      loading rdarrow (the baseline), then rdata_parse_impl(), then VmHWM
#      (peak resident set). Before parsing, the child writes "5" to
#      /proc/self/clear_refs, which resets VmHWM to the current RSS, so the
#      peak left over from R's own start-up cannot be mistaken for parse
#      memory. Reported as (peak - baseline) / uncompressed payload size.
#   4. A markdown table of the timings and one of the ratios against the
#      targets:
#        rdata_objects / load    <= 0.5 (gzip), <= 0.1 (uncompressed)
#        parse / decompress      <= 1.2
#        read_rdata / load       <= 1.0
#        peak parse memory / payload  <= 1.3
#      The xz file has no rdata_objects target (listing a compressed file
#      has to decompress all of it); its ratio is printed for information.
#   It also checks once, outside the timings, that read_rdata(file)[[1]] is
#   identical() to what load() gives, for every file.
#
# How to run (from the repository root, with rdarrow installed)
#   Rscript bench/bench.R                     # 5e6 rows, 3 repetitions
#   Rscript bench/bench.R --rows 500000       # quick run
#   Rscript bench/bench.R --rows 1e6 --reps 5
# At 5e6 rows the payload is about 272 MB. The xz save() takes most of the
# run time: several minutes, and more than 10 on a busy 2-core machine.

suppressPackageStartupMessages(library(rdarrow))
source(file.path(local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[[1]])) else "bench"
}), "common.R"))

# ---- options ---------------------------------------------------------------

parse_args <- function(args) {
  opts <- list(rows = 5e6, reps = 3L)
  i <- 1L
  while (i <= length(args)) {
    key <- args[[i]]
    if (grepl("^--[a-z]+=", key)) {            # --rows=1e6 form
      val <- sub("^--[a-z]+=", "", key)
      key <- sub("=.*$", "", key)
    } else {
      val <- if (i < length(args)) args[[i + 1L]] else NA_character_
      i <- i + 1L
    }
    num <- suppressWarnings(as.numeric(val))
    if (is.na(num) || num < 1) stop(sprintf("%s needs a positive number", key))
    switch(key,
      "--rows" = opts$rows <- num,
      "--reps" = opts$reps <- as.integer(num),
      stop(sprintf("unknown option %s (use --rows N, --reps K)", key))
    )
    i <- i + 1L
  }
  opts$rows <- as.integer(round(opts$rows))
  opts
}

opts <- parse_args(commandArgs(trailingOnly = TRUE))
n <- opts$rows
reps <- opts$reps

# ---- helpers ---------------------------------------------------------------


# Stop on an engine error (the internal functions return it as a value).
engine <- function(res) {
  if (inherits(res, "rdarrow_error_value")) stop("rdarrow engine error: ", res$message)
  res
}



section <- function(title) cat("\n## ", title, "\n\n", sep = "")

# ---- machine ---------------------------------------------------------------

cpu_model <- local({
  lines <- tryCatch(readLines("/proc/cpuinfo"), error = function(e) character())
  m <- grep("^model name", lines, value = TRUE)
  if (length(m)) trimws(sub("^[^:]*:", "", m[[1]])) else "unknown"
})
nproc <- tryCatch(system2("nproc", stdout = TRUE), error = function(e) NA_character_)
mem_total <- tryCatch({
  l <- grep("^MemTotal:", readLines("/proc/meminfo"), value = TRUE)
  sprintf("%.1f GiB", as.numeric(gsub("[^0-9]", "", l)) / 1024^2)
}, error = function(e) "unknown")

cat("# rdarrow benchmark\n\n")
cat("- machine: ", nproc, " cores (nproc), ", cpu_model, ", ", mem_total, " RAM\n", sep = "")
cat("- ", R.version.string, ", ", R.version$platform, "\n", sep = "")
cat("- rdarrow ", format(packageVersion("rdarrow")), " (engine ",
    rdarrow_engine_version(), ")\n", sep = "")
cat("- load average at start (1, 5, 15 min): ", load_avg(), "\n", sep = "")
cat("- rows: ", format(n, big.mark = ","), ", repetitions: ", reps,
    " (median reported)\n", sep = "")

# ---- 1. inputs ---------------------------------------------------------------

section("Inputs")

t_gen <- system.time(df <- bench_frame(n))[["elapsed"]]
cat(sprintf("generated %s rows x %d columns in %.1f s: %s\n",
            format(n, big.mark = ","), ncol(df), t_gen,
            paste(sprintf("%s <%s>", names(df), vapply(df, function(c) class(c)[1], "")),
                  collapse = ", ")))

# Inside the session's tempdir(), which R removes when it exits.
dir <- tempfile("rdarrow-bench-")
dir.create(dir)

files <- c(gzip = file.path(dir, "gzip.RData"),
           xz = file.path(dir, "xz.RData"),
           none = file.path(dir, "none.RData"))
save_arg <- list(gzip = "gzip", xz = "xz", none = FALSE)

save_secs <- numeric()
for (k in names(files)) {
  save_secs[[k]] <- system.time(save(df, file = files[[k]], compress = save_arg[[k]]))[["elapsed"]]
}
rm(df)
invisible(gc())

payload <- vapply(files, function(f) engine(rdarrow:::rdata_decompress_impl(f)), numeric(1))
stopifnot(length(unique(payload)) == 1L)
payload <- payload[[1]]

cat("\n| file | compression | size (MB) | save() (s) |\n|---|---|---:|---:|\n")
for (k in names(files)) {
  cat(sprintf("| %s | %s | %s | %.1f |\n", basename(files[[k]]), k,
              mb(file.size(files[[k]])), save_secs[[k]]))
}
cat(sprintf("\nuncompressed payload (rdata_decompress_impl): %s bytes (%s MB)\n",
            format(payload, big.mark = ","), mb(payload)))

# ---- correctness check (outside the timings) --------------------------------

section("Check: read_rdata() against load()")

for (k in names(files)) {
  env <- new.env()
  loaded <- load(files[[k]], envir = env)
  got <- read_rdata(files[[k]])
  same <- identical(names(got), loaded) && identical(got[[1]], env[[loaded[[1]]]])
  cat(sprintf("- %s: identical(read_rdata(file)[[1]], load()ed object) = %s\n", k, same))
  if (!same) {
    cat("  all.equal says:", format(all.equal(got[[1]], env[[loaded[[1]]]])), "\n")
  }
  rm(env, got)
}
objs <- rdata_objects(files[["gzip"]])
cat("\nrdata_objects(gzip file):\n\n")
print(objs, row.names = FALSE)
invisible(gc())

# ---- 2. timings ----------------------------------------------------------------

section("Timings")
cat("each run, elapsed seconds:\n\n")

methods <- list(
  load          = function(f) { e <- new.env(); load(f, envir = e); rm(e) },
  rdata_objects = function(f) invisible(rdata_objects(f)),
  read_rdata    = function(f) invisible(read_rdata(f)),
  parse         = function(f) engine(rdarrow:::rdata_parse_impl(f, 10000L)),
  decompress    = function(f) engine(rdarrow:::rdata_decompress_impl(f))
)

# Repetitions are interleaved (all methods once, then all again, ...) so that
# a change in machine load affects every method of a file alike.
timings <- matrix(NA_real_, nrow = length(files), ncol = length(methods),
                  dimnames = list(names(files), names(methods)))
for (k in names(files)) {
  f <- files[[k]]
  secs <- matrix(NA_real_, nrow = reps, ncol = length(methods),
                 dimnames = list(NULL, names(methods)))
  for (r in seq_len(reps)) {
    for (m in names(methods)) {
      fun <- methods[[m]]
      secs[r, m] <- time_once(function() fun(f))
    }
  }
  timings[k, ] <- apply(secs, 2, stats::median)
  for (m in names(methods)) {
    cat(sprintf("- %-4s %-13s %s\n", k, m, paste(sprintf("%.3f", secs[, m]), collapse = " ")))
  }
}
cat("\nload average after timing:", load_avg(), "\n")

# ---- 3. peak memory of parsing -------------------------------------------------

section("Peak memory of rdata_parse_impl()")

# Child scripts measure memory with this (bytes of a /proc/self/status field).
status_kb_code <- c(
  "status_kb <- function(field) {",
  "  l <- grep(paste0('^', field, ':'), readLines('/proc/self/status'), value = TRUE)",
  "  as.numeric(gsub('[^0-9]', '', l)) * 1024",
  "}"
)

child_script <- file.path(dir, "peak.R")
writeLines(c(
  "suppressPackageStartupMessages(library(rdarrow))",
  status_kb_code,
  "path <- commandArgs(trailingOnly = TRUE)[[1]]",
  "invisible(gc(full = TRUE))",
  "hwm_start <- status_kb('VmHWM')",
  "reset <- tryCatch({ cat('5', file = '/proc/self/clear_refs'); TRUE },",
  "                  error = function(e) FALSE, warning = function(w) FALSE)",
  "rss0 <- status_kb('VmRSS')",
  "res <- rdarrow:::rdata_parse_impl(path, 10000L)",
  "if (inherits(res, 'rdarrow_error_value')) stop(res$message)",
  "hwm1 <- status_kb('VmHWM')",
  "cat(sprintf('%.0f %.0f %.0f %d %.0f\\n', rss0, hwm1, hwm_start, reset, res))"
), child_script)

rscript <- file.path(R.home("bin"), "Rscript")
peak <- data.frame(compression = names(files), baseline = NA_real_, peak = NA_real_,
                   hwm_start = NA_real_, reset = NA, stringsAsFactors = FALSE)
for (i in seq_along(files)) {
  out <- system2(rscript, c("--vanilla", shQuote(child_script), shQuote(files[[i]])),
                 stdout = TRUE)
  v <- as.numeric(strsplit(trimws(tail(out, 1)), " ")[[1]])
  stopifnot(length(v) == 5L, v[[5]] == payload)
  peak$baseline[i] <- v[[1]]
  peak$peak[i] <- v[[2]]
  peak$hwm_start[i] <- v[[3]]
  peak$reset[i] <- v[[4]] == 1
}
peak$extra <- peak$peak - peak$baseline
peak$ratio <- peak$extra / payload

cat("| compression | baseline VmRSS (MB) | VmHWM after parse (MB) | peak - baseline (MB) | / payload |\n")
cat("|---|---:|---:|---:|---:|\n")
for (i in seq_len(nrow(peak))) {
  cat(sprintf("| %s | %s | %s | %s | %.2f |\n", peak$compression[i], mb(peak$baseline[i]),
              mb(peak$peak[i]), mb(peak$extra[i]), peak$ratio[i]))
}
if (!all(peak$reset)) {
  cat(sprintf(paste0("\nnote: VmHWM could not be reset (/proc/self/clear_refs); the peak ",
                     "includes R's start-up high-water mark (%s MB before parsing).\n"),
              mb(max(peak$hwm_start))))
} else {
  cat("\n(VmHWM reset through /proc/self/clear_refs before parsing; R's start-up",
      "high-water mark was", mb(max(peak$hwm_start)), "MB)\n")
}

# ---- 4. results ------------------------------------------------------------------

section("Results")

cat(sprintf("%s rows, payload %s MB, median of %d, elapsed seconds\n\n",
            format(n, big.mark = ","), mb(payload), reps))
cat("| compression | file (MB) | load | rdata_objects | read_rdata | parse | decompress |\n")
cat("|---|---:|---:|---:|---:|---:|---:|\n")
for (k in names(files)) {
  cat(sprintf("| %s | %s | %s |\n", k, mb(file.size(files[[k]])),
              paste(sprintf("%.3f", timings[k, ]), collapse = " | ")))
}

ratio_rows <- list()
add_ratio <- function(k, what, value, target) {
  verdict <- if (is.na(target)) "no target" else if (value <= target) "meets" else "misses"
  ratio_rows[[length(ratio_rows) + 1L]] <<- data.frame(
    compression = k, ratio = what, value = value,
    target = if (is.na(target)) "-" else sprintf("<= %.1f", target),
    verdict = verdict, stringsAsFactors = FALSE)
}
objects_target <- c(gzip = 0.5, xz = NA, none = 0.1)
for (k in names(files)) {
  add_ratio(k, "rdata_objects / load", timings[k, "rdata_objects"] / timings[k, "load"],
            objects_target[[k]])
  add_ratio(k, "parse / decompress", timings[k, "parse"] / timings[k, "decompress"], 1.2)
  add_ratio(k, "read_rdata / load", timings[k, "read_rdata"] / timings[k, "load"], 1.0)
  add_ratio(k, "peak parse memory / payload", peak$ratio[peak$compression == k], 1.3)
}
ratios <- do.call(rbind, ratio_rows)

cat("\n| compression | ratio | value | target | verdict |\n|---|---|---:|---|---|\n")
for (i in seq_len(nrow(ratios))) {
  cat(sprintf("| %s | %s | %.3f | %s | %s |\n", ratios$compression[i], ratios$ratio[i],
              ratios$value[i], ratios$target[i], ratios$verdict[i]))
}
scored <- ratios[ratios$verdict != "no target", ]
cat(sprintf("\n%d of %d targets met.\n", sum(scored$verdict == "meets"), nrow(scored)))

# ---- writing (Arrow -> RData) and converting (RData -> Arrow IPC) ------------
# arrow_to_rdata() of the same data frame against save(), on all cores, with
# R's default levels (gzip 6, bzip2 9, xz 9); and rdata_to_ipc() of the gzip
# file against load() of it. Targets: gzip <= 0.25x save(), bzip2 and xz
# <= 0.55x, no compression <= 0.4x.

section("Writing: arrow_to_rdata() against save()")
df <- read_rdata(files[["gzip"]])[[1]]
save_secs[["bzip2"]] <- system.time(save(df, file = file.path(dir, "bzip2.RData"), compress = "bzip2"))[["elapsed"]]
write_target <- c(gzip = 0.25, bzip2 = 0.55, xz = 0.55, none = 0.4)
cat("| compression | save() (s) | arrow_to_rdata() (s) | ratio | target | verdict | load() of our file |\n")
cat("|---|---:|---:|---:|---|---|---|\n")
write_met <- 0L
for (k in names(write_target)) {
  out <- file.path(dir, paste0("ours-", k, ".RData"))
  secs <- time_once(function() arrow_to_rdata(df, out, name = "df", compress = k))
  e <- new.env()
  ok <- identical(get(load(out, envir = e), envir = e), df)
  r <- secs / save_secs[[k]]
  write_met <- write_met + (r <= write_target[[k]])
  cat(sprintf("| %s | %.1f | %.1f | %.3f | <= %.2f | %s | %s |\n", k, save_secs[[k]], secs, r,
              write_target[[k]], if (r <= write_target[[k]]) "meets" else "misses",
              if (ok) "identical" else "DIFFERS"))
}
cat(sprintf("\n%d of %d writing targets met.\n", write_met, length(write_target)))

section("Converting: rdata_to_ipc() of the gzip file")
ipc <- file.path(dir, "df.arrow")
t_ipc <- time_once(function() rdata_to_ipc(files[["gzip"]], ipc))
cat(sprintf("rdata_to_ipc(): %.3f s (load() of the same file: %.3f s, ratio %.3f); IPC file %s MB\n",
            t_ipc, timings["gzip", "load"], t_ipc / timings["gzip", "load"], mb(file.size(ipc))))

# ---- RData -> Arrow, consumed by pyarrow ------------------------------------
# rdata_to_arrow() of the gzip file, its C stream imported and read to a table
# by pyarrow (the Arrow C++ library the arrow R package wraps) in this R
# process through reticulate, against load() and against the bare
# decompression of the same file (timings above). Peak memory of the same
# work, in a child process, against the Arrow data size (table.nbytes).
# Targets: <= 0.4x load(), <= 1.15x decompression, rdata_to_ipc() <= 0.45x
# load(), peak memory <= 1.3x the Arrow data. Needs reticulate and a Python
# with pyarrow (set RETICULATE_PYTHON); skipped otherwise.

section("Converting: rdata_to_arrow() consumed by pyarrow")
has_pyarrow <- requireNamespace("reticulate", quietly = TRUE) &&
  nzchar(Sys.getenv("RETICULATE_PYTHON")) &&
  isTRUE(tryCatch(reticulate::py_module_available("pyarrow"), error = function(e) FALSE))
if (!has_pyarrow) {
  cat("skipped: set RETICULATE_PYTHON to a Python with pyarrow\n")
} else {
  pa <- reticulate::import("pyarrow", convert = FALSE)
  to_pyarrow <- function(f) {
    s <- rdata_to_arrow(f)
    addr <- reticulate::py_eval(sprintf("int(%s)", rdarrow:::xptr_address_impl(s)), convert = FALSE)
    reader <- pa$RecordBatchReader$`_import_from_c`(addr)
    reader$read_all()
  }
  tbl <- to_pyarrow(files[["gzip"]])
  arrow_bytes <- reticulate::py_to_r(tbl$nbytes)
  rows_ok <- reticulate::py_to_r(tbl$num_rows) == n
  rm(tbl)
  secs <- vapply(seq_len(reps), function(r) time_once(function() { t <- to_pyarrow(files[["gzip"]]); rm(t) }), 0)
  t_arrow <- stats::median(secs)
  cat(sprintf("each run: %s s; table of %s rows (%s), Arrow data %s MB\n\n",
              paste(sprintf("%.3f", secs), collapse = " "), format(n, big.mark = ","),
              if (rows_ok) "all rows" else "ROW COUNT DIFFERS", mb(arrow_bytes)))

  peak_script <- file.path(dir, "peak-arrow.R")
  writeLines(c(
    "suppressPackageStartupMessages(library(rdarrow))",
    status_kb_code,
    "pa <- reticulate::import('pyarrow', convert = FALSE)",
    "path <- commandArgs(trailingOnly = TRUE)[[1]]",
    "invisible(gc(full = TRUE))",
    "cat('5', file = '/proc/self/clear_refs')",
    "rss0 <- status_kb('VmRSS')",
    "s <- rdata_to_arrow(path)",
    "addr <- reticulate::py_eval(sprintf('int(%s)', rdarrow:::xptr_address_impl(s)), convert = FALSE)",
    "tbl <- pa$RecordBatchReader$`_import_from_c`(addr)$read_all()",
    "hwm1 <- status_kb('VmHWM')",
    "cat(sprintf('%.0f %.0f %.0f\\n', rss0, hwm1, reticulate::py_to_r(tbl$nbytes)))"
  ), peak_script)
  out <- system2(rscript, c("--vanilla", shQuote(peak_script), shQuote(files[["gzip"]])), stdout = TRUE)
  v <- as.numeric(strsplit(trimws(tail(out, 1)), " ")[[1]])
  arrow_peak <- (v[[2]] - v[[1]]) / v[[3]]

  t_ipc_plain <- time_once(function() rdata_to_ipc(files[["gzip"]], ipc, compression = "uncompressed"))
  arrow_rows <- data.frame(
    ratio = c("rdata_to_arrow() into pyarrow / load()", "rdata_to_arrow() into pyarrow / decompress",
              "rdata_to_ipc() (uncompressed) / load()", "peak memory / Arrow data"),
    value = c(t_arrow / timings["gzip", "load"], t_arrow / timings["gzip", "decompress"],
              t_ipc_plain / timings["gzip", "load"], arrow_peak),
    target = c(0.4, 1.15, 0.45, 1.3))
  cat("| gzip file | value | target | verdict |\n|---|---:|---|---|\n")
  for (i in seq_len(nrow(arrow_rows))) {
    cat(sprintf("| %s | %.3f | <= %.2f | %s |\n", arrow_rows$ratio[i], arrow_rows$value[i],
                arrow_rows$target[i], if (arrow_rows$value[i] <= arrow_rows$target[i]) "meets" else "misses"))
  }
  cat(sprintf("\n(rdata_to_arrow() into pyarrow %.3f s, rdata_to_ipc() %.3f s, load() %.3f s, decompress %.3f s;",
              t_arrow, t_ipc_plain, timings["gzip", "load"], timings["gzip", "decompress"]),
      sprintf("peak %s MB over a baseline of %s MB)\n", mb(v[[2]] - v[[1]]), mb(v[[1]])))
}
# The lossless circle: the benchmark frame to Arrow and back to .RData,
# through the C stream and through the real arrow R package's Table,
# loads back identical() to the frame save() wrote.
section("The lossless circle: arrow_to_rdata(rdata_to_arrow()) of the gzip file")
loaded_df <- local({ e <- new.env(); get(load(files[["gzip"]], envir = e), envir = e) })
circle <- file.path(dir, "circle.RData")
t_circle <- time_once(function() arrow_to_rdata(rdata_to_arrow(files[["gzip"]]), circle, name = "df"))
same <- identical(local({ e <- new.env(); get(load(circle, envir = e), envir = e) }), loaded_df)
cat(sprintf("C stream: %.3f s (load() + save() of the same frame: %.3f s); load()s back identical(): %s\n",
            t_circle, timings["gzip", "load"] + save_secs[["gzip"]], same))
if (requireNamespace("arrow", quietly = TRUE)) {
  t_tab <- time_once(function() arrow_to_rdata(arrow::as_arrow_table(rdata_to_arrow(files[["gzip"]])), circle, name = "df"))
  same_tab <- identical(local({ e <- new.env(); get(load(circle, envir = e), envir = e) }), loaded_df)
  cat(sprintf("through arrow R's Table: %.3f s; load()s back identical(): %s\n", t_tab, same_tab))
  cat("the schema arrow R sees:\n")
  print(arrow::as_arrow_table(rdata_to_arrow(files[["gzip"]]))$schema)
} else {
  cat("arrow R route skipped: the arrow R package is not installed\n")
}

cat("\nload average at the end:", load_avg(), "\n")
