# Writing where the disk says no: a full file system, a read-only file
# system and a folder that does not exist. Every writer (arrow_to_rdata()
# from a data frame and from a stream, rdata_to_ipc(), ipc_to_rdata()) must
# fail with an rdarrow_error, leave the file it was to replace byte for byte
# as it was, leave no temporary file (".<name>.rdarrow-<pid>.tmp") behind
# and keep no file descriptor open on the target's file system.
#
# The full and read-only file systems are small tmpfs mounts, so those
# tests need root on Linux (root ignores permission bits, so chmod 0555 is
# no test there; a read-only mount is). They skip cleanly otherwise, and
# always unmount on exit.
#
# Every function here starts with `disk_`.

# ---------------------------------------------------------------------------
# Helpers

disk_is_root <- function() {
  uid <- tryCatch(suppressWarnings(system2("id", "-u", stdout = TRUE, stderr = FALSE)),
                  error = function(e) "")
  identical(trimws(uid[1]), "0")
}

# Is `dir` a mount point (listed in /proc/self/mounts)?
disk_is_mounted <- function(dir) {
  if (!file.exists("/proc/self/mounts")) return(FALSE)
  mounts <- readLines("/proc/self/mounts", warn = FALSE)
  # Mount points are the second field, with spaces etc. as octal escapes.
  points <- vapply(strsplit(mounts, " ", fixed = TRUE), `[`, "", 2L)
  points <- gsub("\\\\040", " ", points)
  normalizePath(dir, mustWork = FALSE) %in% points
}

# Run a system command, returning list(status, output).
disk_run <- function(cmd, args) {
  out <- suppressWarnings(tryCatch(system2(cmd, args, stdout = TRUE, stderr = TRUE),
                                   error = function(e) structure(conditionMessage(e), status = 127L)))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else as.integer(status), output = paste(out, collapse = "\n"))
}

# A fresh folder with a tmpfs of `size` mounted on it, unmounted and
# removed when `envir` (the calling test) exits. Skips unless on Linux as
# root with a working mount.
disk_local_tmpfs <- function(size = "2m", envir = parent.frame()) {
  skip_on_cran()
  if (!identical(Sys.info()[["sysname"]], "Linux")) skip("tmpfs mounts need Linux")
  if (!disk_is_root()) skip("mounting a tmpfs needs root")
  if (!nzchar(Sys.which("mount")) || !nzchar(Sys.which("umount"))) skip("mount/umount not found")
  d <- tempfile("rdarrow-disk-")
  dir.create(d)
  d <- normalizePath(d)
  res <- disk_run("mount", c("-t", "tmpfs", "-o", shQuote(paste0("size=", size)), "tmpfs", shQuote(d)))
  if (res$status != 0L || !disk_is_mounted(d)) {
    unlink(d, recursive = TRUE)
    skip(paste("cannot mount a tmpfs:", res$output))
  }
  # The helpers go into the cleanup code as function objects, so it does not
  # depend on what the test's frame can see.
  cleanup <- substitute({
    if (IS_MOUNTED(D)) {
      r <- RUN("umount", shQuote(D))
      if (r$status != 0L) {
        # Busy (a leaked descriptor?): detach it anyway, and say so.
        RUN("umount", c("-l", shQuote(D)))
        warning("tmpfs at ", D, " was busy at unmount: ", r$output, call. = FALSE)
      }
    }
    unlink(D, recursive = TRUE)
  }, list(D = d, IS_MOUNTED = disk_is_mounted, RUN = disk_run))
  do.call(on.exit, list(cleanup, add = TRUE), envir = envir)
  d
}

# A fresh ordinary temporary folder, removed when `envir` exits.
disk_local_tempdir <- function(envir = parent.frame()) {
  d <- tempfile("rdarrow-disk-src-")
  dir.create(d)
  do.call(on.exit, list(substitute(unlink(D, recursive = TRUE), list(D = d)), add = TRUE),
          envir = envir)
  normalizePath(d)
}

disk_read_bytes <- function(f) readBin(f, "raw", n = file.size(f) + 1024)

disk_listing <- function(dir) sort(list.files(dir, all.files = TRUE, no.. = TRUE))

# Leftover temporary files of an atomic write.
disk_tmp_files <- function(dir) grep("\\.tmp$", disk_listing(dir), value = TRUE)

# File descriptors of this process open on something under `dir`.
disk_open_fds_under <- function(dir) {
  fds <- list.files("/proc/self/fd", full.names = TRUE)
  targets <- suppressWarnings(Sys.readlink(fds))
  targets <- targets[!is.na(targets) & nzchar(targets)]
  targets[startsWith(targets, paste0(dir, "/"))]
}

disk_load <- function(f) {
  e <- new.env(parent = emptyenv())
  load(f, envir = e)
  as.list(e, all.names = TRUE, sorted = TRUE)
}

# save() `df` as "x" into `dir`; returns the path.
disk_save_x <- function(df, dir, file = "src.RData", compress = FALSE) {
  f <- file.path(dir, file)
  e <- new.env(parent = emptyenv())
  assign("x", df, envir = e)
  save(list = "x", envir = e, file = f, compress = compress)
  f
}

# An existing small valid .RData inside `dir`, made elsewhere and copied
# in (as a user's old file would be). Returns its path.
disk_put_old_file <- function(dir, src_dir) {
  cars <- head(mtcars)
  made <- file.path(src_dir, "made-elsewhere.RData")
  save(cars, file = made)
  old <- file.path(dir, "old.RData")
  stopifnot(file.copy(made, old))
  expect_identical(disk_load(old), list(cars = head(mtcars)))
  old
}

# `expr` must fail with an rdarrow_error (of class `class` too, if given)
# that is a clean error: a message, no Rust panic text. Returns the error.
disk_expect_rdarrow_error <- function(expr, class = NULL, label = "") {
  err <- tryCatch({
    force(expr)
    NULL
  }, error = function(e) e)
  expect_false(is.null(err), info = paste(label, "did not fail"))
  if (is.null(err)) return(invisible(NULL))
  expect_s3_class(err, "rdarrow_error")
  if (!is.null(class)) expect_s3_class(err, class)
  msg <- conditionMessage(err)
  expect_true(is.character(msg) && length(msg) == 1L && nzchar(msg), info = label)
  expect_false(grepl("panick|RUST_BACKTRACE|unwrap\\(\\)", msg), info = paste(label, ":", msg))
  invisible(err)
}

# After a failed write into `dir`: the old file is byte-identical and still
# loads, nothing else appeared (no temporary file), no descriptor is left
# open on `dir`.
disk_expect_untouched <- function(dir, old, old_bytes, listing, label = "") {
  expect_identical(disk_read_bytes(old), old_bytes, info = label)
  expect_identical(disk_load(old), list(cars = head(mtcars)), info = label)
  expect_identical(disk_tmp_files(dir), character(), info = label)
  expect_identical(disk_listing(dir), listing, info = label)
  expect_identical(disk_open_fds_under(dir), character(), info = label)
}

# ---------------------------------------------------------------------------
# Full disk

test_that("a write too big for the disk is an rdarrow_error and the old file survives", {
  d <- disk_local_tmpfs("2m")
  src_dir <- disk_local_tempdir()
  old <- disk_put_old_file(d, src_dir)
  old_bytes <- disk_read_bytes(old)
  listing <- disk_listing(d)
  expect_identical(listing, "old.RData")

  # 1e6 random doubles: 8 MB raw, and they hardly compress.
  set.seed(42)
  big <- data.frame(x = runif(1e6))
  big_src <- disk_save_x(big, src_dir, "big.RData")
  big_ipc <- file.path(src_dir, "big.arrow")
  rdata_to_ipc(big_src, big_ipc)
  expect_true(file.size(big_ipc) > 4e6)
  big_pq <- file.path(src_dir, "big.parquet")
  rdata_to_parquet(big_src, big_pq, compression = "uncompressed")
  # gzip: its decompressed stream is spilled beside the sink, and the
  # spill is what fills the disk
  big_gz <- disk_save_x(big, src_dir, "big-gz.RData", compress = TRUE)

  attempts <- list(
    "arrow_to_rdata(data frame, none)" = function() arrow_to_rdata(big, old, name = "big", compress = "none"),
    "arrow_to_rdata(data frame, gzip, 2 threads)" = function() arrow_to_rdata(big, old, name = "big", compress = "gzip", threads = 2),
    "arrow_to_rdata(data frame, rds)" = function() arrow_to_rdata(big, file.path(d, "old.rds"), compress = "none"),
    "arrow_to_rdata(stream, none)" = function() arrow_to_rdata(rdata_to_arrow(big_src), old, name = "big", compress = "none"),
    "arrow_to_rdata(stream, xz, 3 threads)" = function() arrow_to_rdata(rdata_to_arrow(big_src, chunk_size = 1e5), old, name = "big", compress = "xz", compression_level = 0, threads = 3),
    "rdata_to_ipc(file)" = function() rdata_to_ipc(big_src, old),
    "rdata_to_ipc(stream, zstd)" = function() rdata_to_ipc(big_src, old, format = "stream", compression = "zstd", chunk_size = 1e5),
    "ipc_to_rdata(none)" = function() ipc_to_rdata(big_ipc, old, compress = "none"),
    "ipc_to_rdata(gzip)" = function() ipc_to_rdata(big_ipc, old, compress = "gzip", threads = 2),
    "arrow_to_rdata(new file)" = function() arrow_to_rdata(big, file.path(d, "new.RData"), compress = "none"),
    "rdata_to_ipc(new file)" = function() rdata_to_ipc(big_src, file.path(d, "new.arrow")),
    "rdata_to_parquet(uncompressed)" = function() rdata_to_parquet(big_src, file.path(d, "new.parquet"), compression = "uncompressed"),
    "rdata_to_parquet(spilling a gzip file)" = function() rdata_to_parquet(big_gz, file.path(d, "new.parquet")),
    "rdata_to_ipc(spilling a gzip file)" = function() rdata_to_ipc(big_gz, file.path(d, "new.arrow")),
    "parquet_to_rdata(none)" = function() parquet_to_rdata(big_pq, old, compress = "none")
  )
  for (label in names(attempts)) {
    disk_expect_rdarrow_error(attempts[[label]](), class = "rdarrow_error_io", label = label)
    disk_expect_untouched(d, old, old_bytes, listing, label = label)
    # the message names the file asked for, not the temporary file
    msg <- tryCatch({ attempts[[label]](); "" }, rdarrow_error = conditionMessage)
    expect_match(msg, d, fixed = TRUE, label = paste(label, "message"))
    expect_false(grepl(".rdarrow-", msg, fixed = TRUE), label = paste(label, "message"))
  }
  gc()
  expect_identical(disk_open_fds_under(d), character())
})

test_that("a small write to a disk that is already full is an rdarrow_error and the old file survives", {
  # Errors that surface only when buffers are flushed (the data is far
  # smaller than any write buffer) or when the file is synced and renamed.
  d <- disk_local_tmpfs("2m")
  src_dir <- disk_local_tempdir()
  old <- disk_put_old_file(d, src_dir)
  old_bytes <- disk_read_bytes(old)
  small_src <- disk_save_x(head(mtcars), src_dir, "small.RData")
  small_ipc <- file.path(src_dir, "small.arrow")
  rdata_to_ipc(small_src, small_ipc)

  # Fill the file system to the last byte.
  filler <- file.path(d, "filler")
  disk_run("dd", c("if=/dev/zero", paste0("of=", shQuote(filler)), "bs=4096"))
  expect_true(file.exists(filler))
  expect_true(file.size(filler) > 1e6)
  # Nothing more fits.
  probe <- file.path(d, "probe")
  suppressWarnings(try(writeLines(strrep("x", 1e4), probe), silent = TRUE))
  expect_true(!file.exists(probe) || file.size(probe) < 1e4)
  unlink(probe)
  listing <- disk_listing(d)

  attempts <- list(
    "arrow_to_rdata(data frame, none)" = function() arrow_to_rdata(head(mtcars), old, name = "cars", compress = "none"),
    "arrow_to_rdata(data frame, gzip)" = function() arrow_to_rdata(head(mtcars), old, name = "cars", compress = "gzip", threads = 2),
    "arrow_to_rdata(data frame, ascii)" = function() arrow_to_rdata(head(mtcars), old, name = "cars", compress = "none", ascii = TRUE),
    "arrow_to_rdata(stream)" = function() arrow_to_rdata(rdata_to_arrow(small_src), old, name = "cars", compress = "bzip2"),
    "rdata_to_ipc(file)" = function() rdata_to_ipc(small_src, old),
    "rdata_to_ipc(stream)" = function() rdata_to_ipc(small_src, old, format = "stream"),
    "ipc_to_rdata()" = function() ipc_to_rdata(small_ipc, old, compress = "none")
  )
  for (label in names(attempts)) {
    disk_expect_rdarrow_error(attempts[[label]](), class = "rdarrow_error_io", label = label)
    disk_expect_untouched(d, old, old_bytes, listing, label = label)
    # the message names the file asked for, not the temporary file
    msg <- tryCatch({ attempts[[label]](); "" }, rdarrow_error = conditionMessage)
    expect_match(msg, d, fixed = TRUE, label = paste(label, "message"))
    expect_false(grepl(".rdarrow-", msg, fixed = TRUE), label = paste(label, "message"))
  }

  # With room again, the same writes succeed: the failures above were the
  # full disk, nothing else.
  unlink(filler)
  arrow_to_rdata(head(mtcars), old, name = "cars", compress = "none")
  expect_identical(disk_load(old), list(cars = head(mtcars)))
  ipc_to_rdata(small_ipc, old, name = "cars")
  expect_identical(disk_load(old), list(cars = head(mtcars)))
  expect_identical(disk_listing(d), "old.RData")
  expect_identical(disk_open_fds_under(d), character())
})

# ---------------------------------------------------------------------------
# Read-only file system

test_that("writing to a read-only file system is an rdarrow_error and the old file survives", {
  d <- disk_local_tmpfs("2m")
  src_dir <- disk_local_tempdir()
  old <- disk_put_old_file(d, src_dir)
  old_bytes <- disk_read_bytes(old)
  small_src <- disk_save_x(head(mtcars), src_dir, "small.RData")
  small_ipc <- file.path(src_dir, "small.arrow")
  rdata_to_ipc(small_src, small_ipc)

  res <- disk_run("mount", c("-o", "remount,ro", shQuote(d)))
  if (res$status != 0L) skip(paste("cannot remount the tmpfs read-only:", res$output))
  # Really read-only, even for root.
  expect_false(suppressWarnings(file.create(file.path(d, "probe"))))
  listing <- disk_listing(d)
  expect_identical(listing, "old.RData")

  attempts <- list(
    "arrow_to_rdata(data frame)" = function() arrow_to_rdata(head(mtcars), old, name = "cars"),
    "arrow_to_rdata(data frame, rds)" = function() arrow_to_rdata(head(mtcars), file.path(d, "old.rds")),
    "arrow_to_rdata(stream)" = function() arrow_to_rdata(rdata_to_arrow(small_src), old, name = "cars", threads = 2),
    "rdata_to_ipc(file)" = function() rdata_to_ipc(small_src, old),
    "rdata_to_ipc(stream)" = function() rdata_to_ipc(small_src, old, format = "stream", compression = "lz4"),
    "ipc_to_rdata()" = function() ipc_to_rdata(small_ipc, old),
    "arrow_to_rdata(new file)" = function() arrow_to_rdata(head(mtcars), file.path(d, "new.RData")),
    "rdata_to_ipc(new file)" = function() rdata_to_ipc(small_src, file.path(d, "new.arrow")),
    "ipc_to_rdata(new file)" = function() ipc_to_rdata(small_ipc, file.path(d, "new.RData"))
  )
  for (label in names(attempts)) {
    disk_expect_rdarrow_error(attempts[[label]](), class = "rdarrow_error_io", label = label)
    disk_expect_untouched(d, old, old_bytes, listing, label = label)
    # the message names the file asked for, not the temporary file
    msg <- tryCatch({ attempts[[label]](); "" }, rdarrow_error = conditionMessage)
    expect_match(msg, d, fixed = TRUE, label = paste(label, "message"))
    expect_false(grepl(".rdarrow-", msg, fixed = TRUE), label = paste(label, "message"))
  }

  # Reading from the read-only file system still works.
  expect_identical(read_rdata(old), list(cars = head(mtcars)))
  expect_identical(as.data.frame(rdata_to_arrow(old)), head(mtcars))
})

# ---------------------------------------------------------------------------
# Folder that does not exist

test_that("writing into a folder that does not exist is an rdarrow_error and creates nothing", {
  src_dir <- disk_local_tempdir()
  small_src <- disk_save_x(head(mtcars), src_dir, "small.RData")
  small_ipc <- file.path(src_dir, "small.arrow")
  rdata_to_ipc(small_src, small_ipc)
  listing <- disk_listing(src_dir)
  src_bytes <- disk_read_bytes(small_src)

  missing <- file.path(src_dir, "no-such-folder")
  nested <- file.path(src_dir, "no", "such", "folder")
  not_a_dir <- small_src  # a regular file used as a folder

  for (dir in c(missing, nested, not_a_dir)) {
    attempts <- list(
      "arrow_to_rdata(data frame)" = function() arrow_to_rdata(head(mtcars), file.path(dir, "out.RData")),
      "arrow_to_rdata(data frame, rds)" = function() arrow_to_rdata(head(mtcars), file.path(dir, "out.rds")),
      "arrow_to_rdata(stream)" = function() arrow_to_rdata(rdata_to_arrow(small_src), file.path(dir, "out.RData")),
      "rdata_to_ipc()" = function() rdata_to_ipc(small_src, file.path(dir, "out.arrow")),
      "rdata_to_ipc(stream)" = function() rdata_to_ipc(small_src, file.path(dir, "out.arrows"), format = "stream"),
      "ipc_to_rdata()" = function() ipc_to_rdata(small_ipc, file.path(dir, "out.RData"))
    )
    for (label in names(attempts)) {
      disk_expect_rdarrow_error(attempts[[label]](), label = paste(label, "into", dir))
      expect_false(dir.exists(dir), info = paste(label, "into", dir))
      expect_identical(disk_listing(src_dir), listing, info = paste(label, "into", dir))
    }
  }
  expect_identical(disk_listing(src_dir), listing)
  expect_identical(disk_read_bytes(small_src), src_bytes)
  expect_identical(disk_load(small_src), list(x = head(mtcars)))
})
