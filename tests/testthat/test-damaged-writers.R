# Damaged inputs of the writers that take many files or one array:
# rdata_to_dataset(), rdata_to_tensor(), `rdarrow to-dataset`/`to-tensor`
# and read_rds() over several files. Without salvage a damaged input is an
# error naming the file and pointing to salvage; with salvage = TRUE what
# an intact file gives of the intact part, and a warning naming the file,
# never different data without a word; intact files as ever.

# The bytes of `f` without its last `n` (cut), or with byte `at` from its
# end flipped (flip), in a new file.
damaged_copy <- function(f, cut = 0L, flip = 0L, envir = parent.frame()) {
  raw <- readBin(f, "raw", file.size(f))
  if (flip > 0L) {
    at <- length(raw) - flip + 1L
    raw[at] <- xor(raw[at], as.raw(0x10))
  }
  bad <- local_tempfile(paste0(".", tools::file_ext(f)), envir = envir)
  writeBin(raw[seq_len(length(raw) - cut)], bad)
  bad
}

# `expr`'s value and its warnings' messages.
with_warnings <- function(expr) {
  w <- character()
  value <- withCallingHandlers(expr, warning = function(c) {
    w <<- c(w, conditionMessage(c))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = w)
}

# A dataset's rows as R data frames, one per file written (in order).
dataset_frames <- function(dir) {
  files <- sort(list.files(dir, pattern = "[.]parquet$", recursive = TRUE, full.names = TRUE))
  lapply(files, function(f) {
    out <- tempfile(fileext = ".rds")
    on.exit(unlink(out))
    parquet_to_rdata(f, out)
    readRDS(out)
  })
}

writer_frame <- function(n = 3000L) {
  set.seed(11)
  data.frame(
    id = seq_len(n),
    x = sin(seq_len(n) / 7),
    g = factor(sample(c("a", "b", "c"), n, TRUE)),
    s = sprintf("item %05d", seq_len(n)),
    stringsAsFactors = FALSE
  )
}

test_that("a damaged input of rdata_to_dataset() is an error naming it, or with salvage its whole columns and a warning naming it", {
  df <- writer_frame()
  intact <- local_tempfile(".rds")
  saveRDS(df[1:10, ], intact)
  raw_f <- local_tempfile(".rds")
  saveRDS(df, raw_f, compress = FALSE)
  gz_f <- local_tempfile(".rds")
  saveRDS(df, gz_f)
  # damage in the trailing attributes (cut, uncompressed and gzip) keeps
  # every column by name: the dataset holds the data frame's rows
  for (bad in list(damaged_copy(raw_f, cut = 30L), damaged_copy(gz_f, cut = 12L))) {
    ds <- tempfile("ds")
    on.exit(unlink(ds, recursive = TRUE), add = TRUE)
    e <- tryCatch(rdata_to_dataset(c(intact, bad), ds), rdarrow_error = function(e) e)
    expect_s3_class(e, "rdarrow_error_truncated")
    expect_match(conditionMessage(e), bad, fixed = TRUE)
    expect_match(conditionMessage(e), "salvage = TRUE", fixed = TRUE)
    expect_false(dir.exists(ds) && length(list.files(ds, recursive = TRUE)) > 0)
    got <- with_warnings(rdata_to_dataset(c(intact, bad), ds, salvage = TRUE))
    expect_length(got$warnings, 1L)
    expect_match(got$warnings, sprintf("file '%s'", bad), fixed = TRUE)
    expect_match(got$warnings, "all 4 elements of the object whole, with their names", fixed = TRUE)
    expect_match(got$warnings, "returned: what was kept of the object", fixed = TRUE)
    frames <- dataset_frames(ds)
    expect_length(frames, 2L)
    # the intact file as ever; the damaged one's rows, every value
    expect_identical(frames[[1]], `rownames<-`(df[1:10, ], NULL))
    expect_identical(frames[[2]], df)
  }
  # a byte flipped in the gzip trailer: the stream parses, its check fails
  bad <- damaged_copy(gz_f, flip = 6L)
  ds <- tempfile("ds")
  on.exit(unlink(ds, recursive = TRUE), add = TRUE)
  expect_error(rdata_to_dataset(bad, ds), "salvage = TRUE", class = "rdarrow_error_corrupt")
  got <- with_warnings(rdata_to_dataset(bad, ds, salvage = TRUE))
  expect_match(got$warnings, "values may be wrong", fixed = TRUE)
  expect_identical(dataset_frames(ds)[[1]], df)
  # cut in the middle: the leading columns kept by position are not the
  # dataset's columns, an error naming the file, never other rows
  mid <- damaged_copy(raw_f, cut = file.size(raw_f) %/% 2L)
  ds <- tempfile("ds")
  on.exit(unlink(ds, recursive = TRUE), add = TRUE)
  e <- tryCatch(suppressWarnings(rdata_to_dataset(c(intact, mid), ds, salvage = TRUE)),
                rdarrow_error = function(e) conditionMessage(e))
  expect_match(e, mid, fixed = TRUE)
  expect_false(dir.exists(ds) && length(list.files(ds, recursive = TRUE)) > 0)
  expect_error(rdata_to_dataset(intact, ds, salvage = NA), class = "rdarrow_error_usage")
})

test_that("a damaged .RData input of a dataset gives its data frames read whole, never another object", {
  df <- writer_frame()
  meta <- data.frame(id = 1:10, g = letters[1:10])
  f <- local_tempfile(".RData")
  save(meta, df, file = f, compress = FALSE)
  # cut inside df's columns: meta is whole, df is cut (its class lost)
  bad <- damaged_copy(f, cut = file.size(f) %/% 3L)
  ds <- tempfile("ds")
  on.exit(unlink(ds, recursive = TRUE), add = TRUE)
  expect_error(rdata_to_dataset(bad, ds), "salvage = TRUE", class = "rdarrow_error_truncated")
  got <- with_warnings(rdata_to_dataset(bad, ds, salvage = TRUE))
  expect_match(got$warnings, "returned: object 'meta', read whole", fixed = TRUE)
  expect_match(got$warnings, "object 'df'", fixed = TRUE)
  expect_identical(dataset_frames(ds), list(meta))
  # df named: what was kept of it (its whole columns, by position)
  ds2 <- tempfile("ds")
  on.exit(unlink(ds2, recursive = TRUE), add = TRUE)
  got <- with_warnings(rdata_to_dataset(bad, ds2, object = "df", salvage = TRUE))
  expect_match(got$warnings, "returned: what was kept of object 'df'", fixed = TRUE)
  back <- dataset_frames(ds2)[[1]]
  expect_gt(length(back), 0L)
  expect_lt(length(back), 4L)
  expect_identical(names(back), paste0("V", seq_along(back)))
  expect_identical(unname(as.list(back)), unname(as.list(df))[seq_along(back)])
})

test_that("the command line's --salvage to-dataset warns of each damaged file on standard error", {
  df <- writer_frame()
  intact <- local_tempfile(".rds")
  saveRDS(df[1:10, ], intact)
  gz_f <- local_tempfile(".rds")
  saveRDS(df, gz_f)
  bad <- damaged_copy(gz_f, cut = 12L)
  ds <- tempfile("ds")
  on.exit(unlink(ds, recursive = TRUE), add = TRUE)
  r <- run_cli(c("to-dataset", intact, bad, "-o", ds))
  expect_identical(r$status, 1L)
  err <- paste(r$stderr, collapse = "\n")
  expect_match(err, bad, fixed = TRUE)
  expect_match(err, "--salvage", fixed = TRUE)
  r <- run_cli(c("--salvage", "to-dataset", intact, bad, "-o", ds))
  expect_identical(r$status, 0L)
  err <- paste(r$stderr, collapse = "\n")
  expect_match(err, sprintf("warning: %s: the file is cut short", bad), fixed = TRUE)
  expect_identical(dataset_frames(ds)[[2]], df)
})

test_that("rdata_to_tensor() salvages an array only whole, never one of another shape", {
  m <- matrix(as.double(1:6000), 2)
  raw_f <- local_tempfile(".rds")
  saveRDS(m, raw_f, compress = FALSE)
  gz_f <- local_tempfile(".rds")
  saveRDS(m, gz_f)
  t <- local_tempfile(".tensor")
  # cut in its data or its dim: an error with salvage too, nothing written
  for (bad in list(damaged_copy(raw_f, cut = 8L), damaged_copy(raw_f, cut = 30000L),
                   damaged_copy(gz_f, cut = 12L))) {
    expect_error(rdata_to_tensor(bad, t), "salvage = TRUE", class = "rdarrow_error")
    expect_error(suppressWarnings(rdata_to_tensor(bad, t, salvage = TRUE)), class = "rdarrow_error")
    expect_false(file.exists(t))
  }
  # the gzip trailer's check fails after the array parsed: with a warning
  bad <- damaged_copy(gz_f, flip = 6L)
  expect_error(rdata_to_tensor(bad, t), "salvage = TRUE", class = "rdarrow_error_corrupt")
  got <- with_warnings(rdata_to_tensor(bad, t, salvage = TRUE))
  expect_identical(got$value, c(2, 3000))
  expect_match(got$warnings, "values may be wrong", fixed = TRUE)
  back <- local_tempfile(".rds")
  tensor_to_rdata(t, back)
  expect_identical(readRDS(back), m)
})

test_that("a damaged .RData's array is taken when read whole and named, an error otherwise", {
  a <- matrix(1:20, 4)
  b <- array(as.double(1:6000), c(10, 20, 30))
  f <- local_tempfile(".RData")
  save(a, b, file = f, compress = FALSE)
  bad <- damaged_copy(f, cut = 20000L)  # inside b's data
  t <- local_tempfile(".tensor")
  expect_error(rdata_to_tensor(bad, t, object = "a"), "salvage = TRUE", class = "rdarrow_error_truncated")
  got <- with_warnings(rdata_to_tensor(bad, t, object = "a", salvage = TRUE))
  expect_match(got$warnings, "returned: object 'a', read whole", fixed = TRUE)
  back <- local_tempfile(".rds")
  tensor_to_rdata(t, back)
  expect_identical(readRDS(back), a)
  # without a name, the file's only array is not known (b is lost)
  expect_error(suppressWarnings(rdata_to_tensor(bad, t, salvage = TRUE)),
               "which object the file would give is not known", class = "rdarrow_error_usage")
  # the one the damage is in: an error naming it
  expect_error(suppressWarnings(rdata_to_tensor(bad, t, object = "b", salvage = TRUE)),
               "'b'", class = "rdarrow_error_usage")
  # the command line: the same, its warning on standard error
  out <- local_tempfile(".tensor")
  r <- run_cli(c("--salvage", "to-tensor", bad, "--object", "a", "-o", out))
  expect_identical(r$status, 0L)
  expect_match(paste(r$stderr, collapse = "\n"), "returned: object 'a', read whole", fixed = TRUE)
  r <- run_cli(c("--salvage", "to-tensor", bad, "--object", "b", "-o", out))
  expect_identical(r$status, 1L)
  r <- run_cli(c("to-tensor", bad, "--object", "a", "-o", out))
  expect_identical(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "--salvage", fixed = TRUE)
})

test_that("read_rds() of several files applies the salvage choice rule to each, as to one file", {
  df <- writer_frame(500L)
  meta <- data.frame(id = 1:10, g = letters[1:10])
  d <- local_tempfile("")
  dir.create(d)
  saveRDS(df, file.path(d, "a.rds"))
  # a save() file of one object, and of two: read as one object, a
  # damaged one is an error (how many objects it holds is not known)
  save(meta, file = file.path(d, "one.RData"), compress = FALSE)
  save(meta, df, file = file.path(d, "two.RData"), compress = FALSE)
  expect_error(read_rds(file.path(d, c("a.rds", "two.RData"))), "not one", class = "rdarrow_error_usage")
  cut_one <- damaged_copy(file.path(d, "one.RData"), cut = 4L)
  cut_two <- damaged_copy(file.path(d, "two.RData"), cut = 1000L)
  for (bad in c(cut_one, cut_two)) {
    expect_error(suppressWarnings(read_rds(bad, salvage = TRUE)), "how many objects it holds is not known",
                 class = "rdarrow_error_usage")
    e <- tryCatch(suppressWarnings(read_rds(c(file.path(d, "a.rds"), bad), salvage = TRUE)),
                  rdarrow_error = function(e) conditionMessage(e))
    expect_match(e, sprintf("file '%s'", bad), fixed = TRUE)
    expect_match(e, "how many objects it holds is not known", fixed = TRUE)
  }
  # an .rds cut in its trailing attributes: its whole columns, with a
  # warning naming the file, beside the intact one
  gz <- damaged_copy(file.path(d, "a.rds"), cut = 12L)
  got <- with_warnings(read_rds(c(file.path(d, "a.rds"), gz), salvage = TRUE))
  expect_identical(got$value[[1]], df)
  expect_identical(got$value[[2]], as.list(df))
  expect_identical(got$value[[2]], with_warnings(read_rds(gz, salvage = TRUE))$value)
  expect_match(got$warnings, sprintf("file '%s'", gz), fixed = TRUE)
})
