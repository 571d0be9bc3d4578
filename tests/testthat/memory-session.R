# A mixed reading session for the memory tests: R's own readers and
# rdarrow's alternate over many files in one R process, with collections
# between them; with --torture STEP, R's collector runs at every STEP-th
# allocation while rdarrow reads and builds (gctorture2()), so a vector
# the reader leaves unprotected is freed at once and shows as a crash or
# as a value that differs. Every rdarrow result is compared with what
# R's own reader gives for the same file.
#
#   Rscript memory-session.R [--torture STEP] [--limit N] [--gc-every K] FILE_OR_DIR...
#
# Each file goes through every reader route: read_rds() / read_rdata() of
# the path (the one-call path), of its bytes (a raw vector), with salvage,
# several files at once, the listing, and Arrow and back to R
# (as.data.frame() of rdata_to_arrow()) where the object converts. Prints
# a line per difference and then
#   memory session: N files, N routes identical, N different, N skipped
# and exits with status 1 when anything differs. The test suite runs a
# short session (test-memory-session.R); `bash tools/memory-session.sh`
# runs the long one, over the whole peer corpus, under valgrind
# (arguments from RDARROW_SESSION_ARGS when none are given).

args <- commandArgs(trailingOnly = TRUE)
# (under valgrind, tools/memory-session.sh passes them in the environment)
if (!length(args)) args <- scan(text = Sys.getenv("RDARROW_SESSION_ARGS"), what = "", quiet = TRUE)
opt <- function(name, default) {
  i <- match(name, args)
  if (is.na(i)) return(default)
  v <- args[[i + 1L]]
  args <<- args[-c(i, i + 1L)]
  as.integer(v)
}
torture <- opt("--torture", 0L)
limit <- opt("--limit", .Machine$integer.max)
gc_every <- opt("--gc-every", 25L)
paths <- args
files <- unlist(lapply(paths, function(p) {
  if (dir.exists(p)) {
    list.files(p, pattern = "\\.(rds|rda|RData|rdata)$", full.names = TRUE, recursive = TRUE)
  } else {
    p
  }
}))
files <- head(sort(files), limit)
suppressPackageStartupMessages(library(rdarrow))
# where rdarrow.so is mapped, for tools/valgrind.sh's parser
maps_out <- Sys.getenv("RDARROW_VG_MAPS")
if (nzchar(maps_out) && file.exists("/proc/self/maps")) {
  writeLines(grep("rdarrow", readLines("/proc/self/maps", warn = FALSE), value = TRUE, fixed = TRUE), maps_out)
}

same <- function(a, b) {
  identical(a, b, num.eq = FALSE) ||
    identical(serialize(a, NULL, version = 2L), serialize(b, NULL, version = 2L))
}

# R's own reading of `f`: a named list of its objects, or NULL where R
# cannot read it (or reading it would run code).
r_reads <- function(f) {
  tryCatch(suppressWarnings({
    if (grepl("\\.rds$", f, ignore.case = TRUE)) {
      x <- readRDS(f)
      list(x)
    } else {
      e <- new.env(parent = emptyenv())
      nms <- load(f, envir = e)
      mget(nms, envir = e)
    }
  }), error = function(e) NULL)
}

# rdarrow's reading of `f` through `route`, with the collector tortured.
rd_reads <- function(f, route, other) {
  rds <- grepl("\\.rds$", f, ignore.case = TRUE)
  tortured <- function(expr) {
    if (torture > 0L) gctorture2(torture)
    on.exit(gctorture2(0L))
    suppressWarnings(expr)
  }
  switch(route,
    path = tortured(if (rds) list(read_rds(f)) else unname(read_rdata(f))),
    raw = {
      bytes <- readBin(f, "raw", file.size(f))
      tortured(if (rds) list(read_rds(bytes)) else unname(read_rdata(bytes)))
    },
    salvage = tortured(if (rds) list(read_rds(f, salvage = TRUE)) else unname(read_rdata(f, salvage = TRUE))),
    several = {
      got <- tortured(read_rdata(c(f, other)))
      unname(got[[1]])
    },
    listing = {
      tortured(rdata_objects(f))
      NULL
    },
    arrow = {
      got <- tryCatch(tortured(as.data.frame(rdata_to_arrow(f))), error = function(e) NULL)
      if (is.null(got)) NULL else list(got)
    }
  )
}

routes <- c("path", "raw", "salvage", "several", "listing", "arrow")
counts <- c(files = 0, identical = 0, different = 0, skipped = 0)
for (i in seq_along(files)) {
  f <- files[[i]]
  other <- files[[if (i > 1L) i - 1L else length(files)]]
  ref <- r_reads(f)
  counts[["files"]] <- counts[["files"]] + 1
  for (route in routes) {
    got <- tryCatch(rd_reads(f, route, other), error = function(e) e)
    if (route == "listing" || inherits(got, "error") || is.null(ref)) {
      # (an error is not a memory fault: R may not read it either)
      counts[["skipped"]] <- counts[["skipped"]] + 1
      next
    }
    if (route == "arrow") {
      # Arrow and back: compared where the data frame is plain (atomic
      # columns without attributes, automatic row names), as the type
      # mapping keeps it
      plain <- length(ref) == 1L && is.data.frame(ref[[1]]) &&
        is.integer(attr(ref[[1]], "row.names")) &&
        all(vapply(ref[[1]], function(col) is.atomic(col) && is.null(attributes(col)), TRUE))
      if (is.null(got) || !plain) {
        counts[["skipped"]] <- counts[["skipped"]] + 1
        next
      }
      ref <- list(as.data.frame(ref[[1]]))
    }
    if (same(got, unname(ref))) {
      counts[["identical"]] <- counts[["identical"]] + 1
    } else {
      cat(sprintf("different: %s (route %s)\n", f, route))
      counts[["different"]] <- counts[["different"]] + 1
    }
  }
  if (i %% gc_every == 0L) invisible(gc())
}
cat(sprintf("memory session: %d files, %d routes identical, %d different, %d skipped\n",
            counts[["files"]], counts[["identical"]], counts[["different"]], counts[["skipped"]]))
quit(status = if (counts[["different"]] > 0) 1L else 0L)
