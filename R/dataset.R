#' Write R data files as an Arrow dataset
#'
#' Converts the data frames of many `.RData`/`.rda`/`.rds` files (or of one
#' file holding several data frames) that share their columns into one
#' Arrow dataset directory of Parquet files (the default, as
#' `arrow::write_dataset()` writes) or Arrow IPC files, which
#' `arrow::open_dataset(path)`, `pyarrow.dataset.dataset(path)`, DuckDB and
#' polars read as a single table. The work is done in Rust, without loading the
#' files into R: they are read one after another (only one file's data is
#' held in memory at a time) and the partitions of a file are written in
#' parallel.
#'
#' @section Layout: Without partitioning, the directory holds
#'   `part-0.parquet`, `part-1.parquet`, ... (or `.arrow`): one file per data frame, in the
#'   order of `files`. With `partitioning = "grp"`, the rows are split by
#'   the values of `grp` into hive-style directories `grp=a/part-0.arrow`,
#'   `grp=b/part-0.arrow`, ..., and `grp` itself is not stored in the files
#'   (arrow and pyarrow read it back from the paths with
#'   `partitioning = "hive"`, which `open_dataset()` detects). Values are
#'   written as arrow writes them: factor levels and strings as they are,
#'   numbers in decimal, `NA` as `__HIVE_DEFAULT_PARTITION__`, with
#'   characters other than letters, digits and `-_.~` percent-encoded.
#'   Every file is written unnamed (where the file system allows it) or
#'   under a temporary name and given its name when all are complete;
#'   after an error, the files written so far are removed.
#'
#' @section Schema: All data frames must have the same columns with the
#'   same types (see [rdata_to_arrow()] for the type mapping); columns are
#'   matched by name and written in the first file's order. Factors become
#'   `dictionary<int32, utf8>` in every file. An error of class
#'   `rdarrow_error` names the file and the column that do not match.
#'   Character row names are not kept.
#'
#' @param files Paths of `.RData`/`.rda`/`.rds` files (or of lazy-load
#'   data bases, or http(s) URLs, as [read_rdata()] takes them).
#' @param path The dataset directory; it is created, and must be new or
#'   empty. An object store prefix (`s3://bucket/lake/`) must hold no
#'   object yet; each file is uploaded complete (on a failure, those
#'   uploaded are removed again).
#' @param partitioning `NULL`, or names of columns to partition by
#'   (outermost first).
#' @param format `"parquet"` (Parquet files, zstd-compressed, with the
#'   Arrow schema and its `"r"` metadata stored as arrow stores them),
#'   `"arrow"` (Arrow IPC files, `.arrow`) or `"feather"` (the same bytes,
#'   Feather version 2, with the extension `.feather`).
#' @param object `NULL` to take every data frame of each `.RData` file, or
#'   the name (or object path, as in [rdata_to_arrow()]) of the object to
#'   take from each (an `.rds` file holds one object). When that object is
#'   a list of data frames (results per group, per year, per sheet), each
#'   of its data frames is written, partitioned by their names in the list.
#' @param names_to The partition column (outermost) that holds the names
#'   of a list's data frames (their positions where they have none), when
#'   `object` is a list of data frames.
#' @param salvage `FALSE` (the default) to refuse a damaged file (the
#'   error names it, and nothing is written); `TRUE` to write what is
#'   intact of each damaged file, as [read_rdata()] salvages it: of an
#'   `.rds` file (or the object named by `object`) the object, or the
#'   whole columns of a data frame cut short; of an `.RData` file the data
#'   frames read whole before the damage (those after it are lost; one cut
#'   short lost its class, so name it with `object` to write its whole
#'   columns). Each damaged file gives a warning of class `rdarrow_warning`
#'   naming it and saying what was lost and what was written; intact files
#'   are written as ever. Columns a file lost make its schema differ from
#'   the others': an error naming the file.
#' @return `path`, invisibly.
#' @examples
#' dir <- file.path(tempdir(), "rdarrow-dataset-example")
#' dir.create(dir, showWarnings = FALSE)
#' f1 <- file.path(dir, "jan.RData")
#' f2 <- file.path(dir, "feb.RData")
#' sales <- data.frame(shop = factor(c("a", "b", "a")), amount = c(10, 20, 30))
#' save(sales, file = f1)
#' sales <- data.frame(shop = factor(c("b", "c")), amount = c(40, 50))
#' save(sales, file = f2)
#'
#' out <- file.path(dir, "sales")
#' rdata_to_dataset(c(f1, f2), out, partitioning = "shop")
#' list.files(out, recursive = TRUE)
#' if (requireNamespace("arrow", quietly = TRUE)) {
#'   as.data.frame(arrow::open_dataset(out))
#' }
#' unlink(dir, recursive = TRUE)
#' @inheritParams rdata_objects
#' @export
rdata_to_dataset <- function(files, path, partitioning = NULL,
                             format = c("parquet", "arrow", "feather"), object = NULL,
                             names_to = "name", storage_options = NULL, salvage = FALSE) {
  if (!is.character(files) || length(files) == 0L || anyNA(files) || !all(nzchar(files))) {
    abort_usage("`files` must be a character vector of paths (non-empty strings).")
  }
  storage <- storage_arg(storage_options)
  salvage <- salvage_arg(salvage)
  # globs, directories and store prefixes: the files they name
  files <- expand_files(files, storage)
  where <- r_data_paths(files)
  if (any(where$missing)) {
    missing <- where$missing
    abort_usage(sprintf("file%s %s do%s not exist.",
                        if (sum(missing) > 1L) "s" else "",
                        paste0("'", files[missing], "'", collapse = ", "),
                        if (sum(missing) > 1L) "" else "es"))
  }
  if (any(where$dir)) {
    abort_usage(sprintf("'%s' is a directory, not a file.", files[where$dir][1L]))
  }
  inputs <- where$paths
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path)) {
    abort_usage("`path` must be a single directory path (a non-empty string).")
  }
  if (is.null(partitioning)) {
    partitioning <- character()
  } else if (!is.character(partitioning) || anyNA(partitioning) || !all(nzchar(partitioning))) {
    abort_usage("`partitioning` must be NULL or column names (non-empty strings).")
  } else if (anyDuplicated(partitioning)) {
    abort_usage(sprintf("`partitioning` names column '%s' twice.",
                        partitioning[anyDuplicated(partitioning)]))
  }
  formats <- c("parquet", "arrow", "feather")
  if (!is.character(format) || length(format) < 1L || anyNA(format)) {
    abort_usage("`format` must be \"parquet\", \"arrow\" or \"feather\".")
  }
  if (length(format) > 1L) {
    if (!identical(format, formats)) {
      abort_usage("`format` must be \"parquet\", \"arrow\" or \"feather\".")
    }
    format <- "parquet"
  }
  if (!format %in% formats) {
    abort_usage(sprintf("`format` must be \"parquet\", \"arrow\" or \"feather\", not \"%s\".", format))
  }
  object <- object_arg(object)
  if (!is.character(names_to) || length(names_to) != 1L || is.na(names_to) || !nzchar(names_to)) {
    abort_usage("`names_to` must be a column name (a non-empty string).")
  }
  res <- check_engine(rdata_to_dataset_impl(inputs, path.expand(path), partitioning, format, object,
                                            names_to, session_tz(), read_args(storage, salvage = salvage)))
  # what salvage lost of each damaged file, by the file as given
  for (i in seq_along(res$damage)) damage_warnings(res$damage[[i]], files[[res$damaged[[i]]]])
  invisible(path)
}
