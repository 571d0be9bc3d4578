# rdata_to_dataset(): many R data files with the same columns -> one Arrow
# dataset directory, read back with pyarrow.dataset (and the CLI's
# `to-dataset`, which must write the same files).

ds_fixture <- function(env = parent.frame()) {
  dir <- withr::local_tempdir(.local_envir = env)
  d1 <- data.frame(
    id = 1:3, grp = factor(c("a", "b", "a")), val = c(1.5, 2.5, NA),
    txt = c("x", "y z", "w"), stringsAsFactors = FALSE
  )
  d2 <- data.frame(
    id = 4:6, grp = factor(c("b", NA, "c/d")), val = c(4, 5, 6),
    txt = c(NA, "q", "\u00e9"), stringsAsFactors = FALSE
  )
  # other column order, and a factor with 200+ levels: int16 indices in
  # rdarrow's own mapping, int32 in a dataset
  d3 <- data.frame(
    txt = c("k", "l", "m"), id = 7:9,
    grp = factor(c("a", "a", "b"), levels = c(sprintf("L%03d", 1:200), "a", "b")),
    val = c(7, NA, 9), stringsAsFactors = FALSE
  )
  f1 <- file.path(dir, "f1.RData")
  f2 <- file.path(dir, "f2.RData")
  f3 <- file.path(dir, "f3.rds")
  save(d1, file = f1)
  save(d2, file = f2)
  saveRDS(d3, f3)
  expected <- rbind(d1, d2, d3[names(d1)])
  expected$grp <- as.character(expected$grp)
  list(dir = dir, files = c(f1, f2, f3), expected = expected)
}

py_read_dataset <- function(path, format = "ipc", hive = TRUE) {
  code <- paste(
    "import pyarrow as pa",
    "import pyarrow.dataset as ds",
    "def rdarrow_read_dataset(path, fmt, hive):",
    "    d = ds.dataset(path, format=fmt, partitioning='hive' if hive else None)",
    "    t = d.to_table()",
    "    cols = {}",
    "    for name in t.column_names:",
    "        col = t.column(name)",
    "        if pa.types.is_dictionary(col.type):",
    "            col = col.cast(pa.string())",
    "        cols[name] = col.to_pylist()",
    "    types = [str(t.schema.field(n).type) for n in t.column_names]",
    "    return {'names': list(t.column_names), 'types': types, 'columns': cols}",
    sep = "\n"
  )
  main <- reticulate::py_run_string(code, convert = TRUE)
  res <- main$rdarrow_read_dataset(path, format, hive)
  cols <- lapply(res$columns, function(x) unlist(lapply(x, function(v) if (is.null(v)) NA else v)))
  df <- as.data.frame(cols[res$names], stringsAsFactors = FALSE)
  list(df = df[order(df$id), , drop = FALSE], types = stats::setNames(unlist(res$types), res$names))
}

same_rows <- function(got, expected) {
  got <- got[names(expected)]
  rownames(got) <- NULL
  rownames(expected) <- NULL
  expect_equal(got, expected)
}

test_that("rdata_to_dataset writes one file per data frame", {
  fx <- ds_fixture()
  out <- file.path(fx$dir, "plain")
  expect_invisible(res <- rdata_to_dataset(fx$files, out, format = "arrow"))
  expect_identical(res, out)
  expect_equal(sort(list.files(out, recursive = TRUE)),
               c("part-0.arrow", "part-1.arrow", "part-2.arrow"))
  # the files were written under temporary names, all renamed at the end
  expect_identical(sort(list.files(out, recursive = TRUE, all.files = TRUE)),
                   c("part-0.arrow", "part-1.arrow", "part-2.arrow"))
  for (f in list.files(out, full.names = TRUE)) {
    expect_equal(rawToChar(readBin(f, "raw", 6L)), "ARROW1")
  }

  skip_if_no_pyarrow()
  back <- py_read_dataset(out, hive = FALSE)
  same_rows(back$df, fx$expected)
  expect_equal(unname(back$types[c("id", "val", "txt")]), c("int32", "double", "string"))
  # every file has int32 factor indices, whatever the levels' count
  expect_equal(unname(back$types["grp"]), "dictionary<values=string, indices=int32, ordered=0>")
})

test_that("hive partitioning splits rows into grp=value/part-N.arrow", {
  fx <- ds_fixture()
  out <- file.path(fx$dir, "by_grp")
  rdata_to_dataset(fx$files, out, partitioning = "grp", format = "arrow")
  # the layout arrow::open_dataset(out, format = "arrow") reads
  expect_setequal(list.files(out, recursive = TRUE), c(
    "grp=a/part-0.arrow", "grp=a/part-1.arrow",
    "grp=b/part-0.arrow", "grp=b/part-1.arrow", "grp=b/part-2.arrow",
    "grp=__HIVE_DEFAULT_PARTITION__/part-0.arrow",
    "grp=c%2Fd/part-0.arrow"
  ))
  expect_setequal(list.dirs(out, full.names = FALSE, recursive = FALSE),
                  c("grp=a", "grp=b", "grp=__HIVE_DEFAULT_PARTITION__", "grp=c%2Fd"))

  skip_if_no_pyarrow()
  # the partition column is in the paths only
  ipc <- reticulate::import("pyarrow.ipc", convert = FALSE)
  one <- ipc$open_file(file.path(out, "grp=a", "part-0.arrow"))$read_all()
  expect_equal(py_names(one), c("id", "val", "txt"))
  expect_equal(py_values(one, "id"), c(1L, 3L))

  back <- py_read_dataset(out, hive = TRUE)
  same_rows(back$df, fx$expected)
  expect_equal(unname(back$types["grp"]), "string")

  if (requireNamespace("arrow", quietly = TRUE)) {
    got <- as.data.frame(arrow::open_dataset(out, format = "arrow"))
    got <- got[order(got$id), names(fx$expected)]
    same_rows(as.data.frame(got), fx$expected)
  }
})

test_that("several partition columns nest, and feather files get .feather", {
  fx <- ds_fixture()
  out <- file.path(fx$dir, "nested")
  rdata_to_dataset(fx$files[1:2], out, partitioning = c("grp", "id"), format = "feather")
  files <- list.files(out, recursive = TRUE)
  expect_length(files, 6L)
  expect_true(all(grepl("^grp=[^/]+/id=[0-9]+/part-0\\.feather$", files)))
  expect_true("grp=a/id=3/part-0.feather" %in% files)

  skip_if_no_pyarrow()
  back <- py_read_dataset(out, format = "feather", hive = TRUE)
  same_rows(back$df, fx$expected[1:6, ])
})

test_that("the columns of all inputs must match", {
  fx <- ds_fixture()
  # id as double instead of integer
  bad <- data.frame(id = c(10, 11), grp = factor("a"), val = 1, txt = "k")
  fbad <- file.path(fx$dir, "bad_types.RData")
  save(bad, file = fbad)
  out <- file.path(fx$dir, "mismatch")
  err <- expect_error(rdata_to_dataset(c(fx$files, fbad), out, partitioning = "grp"),
                      class = "rdarrow_error")
  expect_match(conditionMessage(err), "bad_types\\.RData")
  expect_match(conditionMessage(err), "column 'id'")
  expect_match(conditionMessage(err), "Float64.*Int32")
  expect_equal(err$object, "bad")
  # nothing is left behind
  expect_false(dir.exists(out))

  missing_col <- data.frame(id = 1L, grp = factor("a"), val = 1)
  fmiss <- file.path(fx$dir, "missing_col.RData")
  save(missing_col, file = fmiss)
  err <- expect_error(rdata_to_dataset(c(fx$files[1], fmiss), out), class = "rdarrow_error")
  expect_match(conditionMessage(err), "missing_col\\.RData.*column 'txt' is missing")

  extra_col <- data.frame(id = 1L, grp = factor("a"), val = 1, txt = "a", more = 2)
  fextra <- file.path(fx$dir, "extra_col.RData")
  save(extra_col, file = fextra)
  err <- expect_error(rdata_to_dataset(c(fx$files[1], fextra), out), class = "rdarrow_error")
  expect_match(conditionMessage(err), "extra_col\\.RData.*column 'more' is not in")

  # ordered vs unordered factor
  ord <- data.frame(id = 1L, grp = factor("a", ordered = TRUE), val = 1, txt = "a")
  ford <- file.path(fx$dir, "ordered.RData")
  save(ord, file = ford)
  err <- expect_error(rdata_to_dataset(c(fx$files[1], ford), out), class = "rdarrow_error")
  expect_match(conditionMessage(err), "ordered\\.RData.*column 'grp'")
  expect_false(dir.exists(out))
})

test_that("objects are chosen per file, and every data frame is taken by default", {
  fx <- ds_fixture()
  a <- data.frame(id = 1:2, v = c("p", "q"))
  b <- data.frame(id = 3L, v = "r")
  notdf <- 1:10
  f <- file.path(fx$dir, "many.RData")
  save(a, notdf, b, file = f)
  out <- file.path(fx$dir, "all_frames")
  rdata_to_dataset(f, out, format = "arrow")
  expect_equal(sort(list.files(out)), c("part-0.arrow", "part-1.arrow"))

  out2 <- file.path(fx$dir, "only_b")
  rdata_to_dataset(f, out2, object = "b", format = "arrow")
  expect_equal(list.files(out2), "part-0.arrow")

  err <- expect_error(rdata_to_dataset(f, file.path(fx$dir, "none"), object = "zz"),
                      class = "rdarrow_error_usage")
  expect_match(conditionMessage(err), "many\\.RData.*object 'zz' not found")

  skip_if_no_pyarrow()
  back <- py_read_dataset(out2, hive = FALSE)
  expect_equal(back$df$id, 3L)
})

test_that("argument and directory errors are rdarrow_errors", {
  fx <- ds_fixture()
  out <- file.path(fx$dir, "args")
  expect_error(rdata_to_dataset(character(), out), class = "rdarrow_error_usage")
  expect_error(rdata_to_dataset(NA_character_, out), class = "rdarrow_error_usage")
  err <- expect_error(rdata_to_dataset(file.path(fx$dir, "nope.RData"), out),
                      class = "rdarrow_error_usage")
  expect_match(conditionMessage(err), "nope\\.RData")
  expect_error(rdata_to_dataset(fx$files, c(out, out)), class = "rdarrow_error_usage")
  expect_error(rdata_to_dataset(fx$files, out, partitioning = 1), class = "rdarrow_error_usage")
  expect_error(rdata_to_dataset(fx$files, out, partitioning = c("grp", "grp")),
               class = "rdarrow_error_usage")
  expect_error(rdata_to_dataset(fx$files, out, format = "csv"), class = "rdarrow_error_usage")
  expect_error(rdata_to_dataset(fx$files, out, object = c("a", "b")), class = "rdarrow_error_usage")
  err <- expect_error(rdata_to_dataset(fx$files, out, partitioning = "nocol"),
                      class = "rdarrow_error")
  expect_match(conditionMessage(err), "f1\\.RData.*no column 'nocol'")
  expect_false(dir.exists(out))

  # an existing, non-empty directory is not written into
  dir.create(out)
  writeLines("x", file.path(out, "keep.txt"))
  err <- expect_error(rdata_to_dataset(fx$files, out), class = "rdarrow_error")
  expect_match(conditionMessage(err), "not empty")
  expect_equal(list.files(out), "keep.txt")
})

# (cli_binary() and run_cli() are in helper-cli.R)
test_that("the CLI's to-dataset writes the same dataset", {
  fx <- ds_fixture()
  cli_binary()
  from_r <- file.path(fx$dir, "from_r")
  from_cli <- file.path(fx$dir, "from_cli")
  # both default to Parquet (zstd), and write the same bytes
  rdata_to_dataset(fx$files, from_r, partitioning = "grp")
  r <- run_cli(c("to-dataset", fx$files, "-o", from_cli, "--partitioning", "grp"))
  expect_equal(r$status, 0L)
  files <- sort(list.files(from_r, recursive = TRUE))
  expect_true(all(grepl("\\.parquet$", files)))
  expect_equal(sort(list.files(from_cli, recursive = TRUE)), files)
  expect_equal(unname(tools::md5sum(file.path(from_cli, files))),
               unname(tools::md5sum(file.path(from_r, files))))

  # without partitioning, feather
  plain <- file.path(fx$dir, "cli_plain")
  r <- run_cli(c("to-dataset", fx$files, "-o", plain, "--format", "feather"))
  expect_equal(r$status, 0L)
  expect_equal(sort(list.files(plain)), c("part-0.feather", "part-1.feather", "part-2.feather"))

  # a schema that does not unify: exit status 1, the file and column named
  bad <- data.frame(id = 1, grp = factor("a"), val = 1, txt = "k")
  fbad <- file.path(fx$dir, "cli_bad.RData")
  save(bad, file = fbad)
  r <- run_cli(c("to-dataset", fx$files, fbad, "-o", file.path(fx$dir, "cli_bad")))
  expect_equal(r$status, 1L)
  msg <- paste(r$stderr, collapse = "\n")
  expect_match(msg, "cli_bad\\.RData.*column 'id'")
  expect_false(dir.exists(file.path(fx$dir, "cli_bad")))

  # a directory stands for its R data files (in subdirectories too, in
  # sorted order): the same dataset as the files named one by one
  inputs <- file.path(fx$dir, "inputs")
  dir.create(file.path(inputs, "sub"), recursive = TRUE)
  file.copy(fx$files[1:2], inputs)
  file.copy(fx$files[3], file.path(inputs, "sub"))
  writeLines("not R data", file.path(inputs, "notes.txt"))
  from_dir <- file.path(fx$dir, "from_dir")
  r <- run_cli(c("to-dataset", inputs, "-o", from_dir, "--partitioning", "grp"))
  expect_equal(r$status, 0L)
  expect_equal(sort(list.files(from_dir, recursive = TRUE)), files)
  expect_equal(unname(tools::md5sum(file.path(from_dir, files))),
               unname(tools::md5sum(file.path(from_r, files))))
  # a directory without R data files is a usage error
  empty <- file.path(fx$dir, "empty_dir")
  dir.create(empty)
  r <- run_cli(c("to-dataset", empty, "-o", file.path(fx$dir, "none")))
  expect_equal(r$status, 2L)
  expect_match(paste(r$stderr, collapse = "\n"), "holds no .rda, .RData or .rds file")

  skip_if_no_pyarrow()
  back <- py_read_dataset(from_cli, format = "parquet", hive = TRUE)
  same_rows(back$df, fx$expected)
})
