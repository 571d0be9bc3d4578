# Datasets keep every value: every data frame of the lossless circle tests
# (lc_objects() in helper-lossless.R: every column kind, time columns of
# every precision among them) written by rdata_to_dataset() and read back
# by parquet_to_rdata() / ipc_to_rdata() is identical() to what load()
# gives (a dataset's rows have no names: character row names are dropped,
# as the dataset's docs say). Time columns take the type rdata_to_parquet()
# gives them; inputs whose times need different units share the finest
# where one unit keeps them all, and are an error where none does.

skip_on_cran()

# The dataset of one object (the parts of `format`), read back as R.
ds_circle <- function(src, o, dir, format) {
  out <- file.path(dir, paste0("ds-", format))
  unlink(out, recursive = TRUE)
  rdata_to_dataset(src, out, object = o, format = format)
  parts <- list.files(out, recursive = TRUE, full.names = TRUE)
  if (length(parts) != 1L) stop(sprintf("%d files written, not 1", length(parts)))
  back <- file.path(dir, "back.RData")
  unlink(back)
  if (format == "parquet") parquet_to_rdata(parts, back, name = o) else ipc_to_rdata(parts, back, name = o)
  lc_read_back(back, o)
}

# `x` as a dataset gives it back: its character row names dropped.
ds_expected <- function(x) {
  if (is.character(attr(x, "row.names"))) attr(x, "row.names") <- .set_row_names(nrow(x))
  x
}

test_that("every data frame of the circle tests comes back identical() through a dataset", {
  objs <- lc_objects()
  frames <- names(objs)[vapply(objs, is.data.frame, TRUE)]
  expect_gt(length(frames), 30L)
  dir <- withr::local_tempdir()
  src <- lc_save(objs[frames], file.path(dir, "frames.RData"))
  ref <- load_objects(src)
  for (format in c("parquet", "arrow")) {
    ok <- 0L
    for (o in frames) {
      # what rdata_to_parquet() cannot convert, a dataset need not either
      pq <- file.path(dir, "x.parquet")
      if (inherits(try(rdata_to_parquet(src, pq, object = o), silent = TRUE), "try-error")) next
      got <- tryCatch(ds_circle(src, o, dir, format), error = function(e) e)
      if (inherits(got, "error")) {
        expect(FALSE, sprintf("%s (%s): %s", o, format, conditionMessage(got)))
        next
      }
      same <- lc_identical(got, ds_expected(ref[[o]]))
      if (same) ok <- ok + 1L
      expect(same, sprintf("%s (%s): %s", o, format, lc_first_diff(got, ds_expected(ref[[o]]))))
    }
    cat(sprintf("\ndataset circle (%s): %d of %d data frames identical()\n", format, ok, length(frames)))
  }
})

test_that("inputs whose times need different units share a dataset and keep every value", {
  dir <- withr::local_tempdir()
  base <- 1.6e9
  inputs <- list(
    whole = data.frame(t = .POSIXct(base + 0:4, tz = "UTC"),
                       d = as.difftime(c(1, 2, 3, NA, 5), units = "secs")),
    millis = data.frame(t = .POSIXct(base + c(0.5, 1.25, NA, 3.125, 4), tz = "UTC"),
                        d = as.difftime(c(0.5, 1, 2, 3, 4), units = "secs")),
    micros = data.frame(t = .POSIXct(base + (1:5) / 1e6 + 10, tz = "UTC"),
                        d = as.difftime(1:5 / 1e6, units = "secs")),
    nanos = data.frame(t = .POSIXct(1.5e9 + (1:5) * 2^-22, tz = "UTC"), # finer than us
                       d = as.difftime(c(1, 2, 3, 4, 5), units = "secs"))
  )
  files <- vapply(names(inputs), function(n) {
    f <- file.path(dir, paste0(n, ".rds"))
    saveRDS(inputs[[n]], f)
    f
  }, "")
  # the coarsest first, then each needing a finer unit (the dataset is
  # widened), and the other way round; whole seconds with nanoseconds
  orders <- list(c("whole", "millis", "micros"), c("micros", "millis", "whole"),
                 c("whole", "nanos"), c("nanos", "whole"))
  for (order in orders) {
    for (format in c("parquet", "arrow")) {
      out <- file.path(dir, paste0("lake-", format))
      unlink(out, recursive = TRUE)
      rdata_to_dataset(unname(files[order]), out, format = format)
      parts <- file.path(out, sprintf("part-%d.%s", seq_along(order) - 1L, format))
      expect_true(all(file.exists(parts)))
      for (i in seq_along(order)) {
        back <- file.path(dir, "back.rds")
        unlink(back)
        if (format == "parquet") parquet_to_rdata(parts[[i]], back) else ipc_to_rdata(parts[[i]], back)
        got <- readRDS(back)
        expect_true(lc_identical(got, inputs[[order[[i]]]]),
                    info = sprintf("%s in %s (%s)", order[[i]], paste(order, collapse = ","), format))
      }
      if (format == "parquet" && requireNamespace("arrow", quietly = TRUE)) {
        # one schema: every file's time column in one unit, the finest
        # rdata_to_parquet() gives any input alone
        unit_of <- function(p) arrow::read_parquet(p, as_data_frame = FALSE)$schema$t$type$ToString()
        alone <- vapply(files[order], function(f) {
          pq <- file.path(dir, "alone.parquet")
          rdata_to_parquet(f, pq)
          unit_of(pq)
        }, "")
        expect_gt(length(unique(alone)), 1L)
        units <- c("s", "ms", "us", "ns")
        finest <- units[max(match(sub("timestamp\\[([a-z]+).*", "\\1", alone), units))]
        types <- vapply(parts, unit_of, "")
        expect_length(unique(types), 1L)
        expect_match(types[[1]], sprintf("timestamp\\[%s", finest))
      }
    }
  }
  # times no one unit keeps (these milliseconds of 2020 overflow the
  # doubles' precision in nanoseconds, and those nanoseconds need them):
  # an error naming the column, never a value rounded
  lake <- file.path(dir, "lake-none")
  expect_error(rdata_to_dataset(unname(files[c("millis", "nanos")]), lake),
               "column 't' has type", class = "rdarrow_error_usage")
  expect_false(dir.exists(lake) && length(list.files(lake, recursive = TRUE)) > 0L)
})
