# Objects nested in lists, reached by object path ("lst$a", "lst[[2]]", or
# a path's parts) in every reader, and listed with recursive = TRUE.

nested_file <- function(env = parent.frame()) {
  lst <- list(
    a = head(mtcars),
    b = head(iris),
    c = list(d = 1:3, c(x = 1.5, y = NA)),
    `odd name` = factor(c("u", "v", NA))
  )
  df <- data.frame(id = 1:2)
  f <- withr::local_tempfile(fileext = ".RData", .local_envir = env)
  save(lst, df, file = f)
  list(file = f, lst = lst, df = df)
}

test_that("a recursive listing names what lists hold by object path", {
  x <- nested_file()
  top <- rdata_objects(x$file)
  expect_identical(top$name, c("lst", "df"))
  all <- rdata_objects(x$file, recursive = TRUE)
  expect_identical(all$name, c(
    "lst", "lst$a", "lst$b", "lst$c", "lst$c$d", "lst$c[[2]]", "lst$`odd name`", "df"
  ))
  at <- function(n) all[all$name == n, ]
  expect_identical(at("lst$a")$class, "data.frame")
  expect_identical(c(at("lst$a")$nrow, at("lst$a")$ncol), c(6L, 11L))
  expect_identical(at("lst$b")$ncol, 5L)
  expect_identical(at("lst$c")$class, "list")
  expect_identical(at("lst$c[[2]]")$type, "double")
  expect_identical(at("lst$c[[2]]")$length, 2L)
  expect_identical(at("lst$`odd name`")$class, "factor")
  # nested objects have no size of their own in the listing
  expect_true(is.na(at("lst$a")$bytes))
  expect_false(is.na(at("lst")$bytes))
  # the top-level rows are those of the plain listing
  expect_identical(all[all$name %in% top$name, names(top)], top, ignore_attr = TRUE)
})

test_that("read_rdata() reads nested objects by path, identical to R's", {
  x <- nested_file()
  got <- read_rdata(x$file, objects = c("lst$a", "lst[[2]]", "lst$c$d", "lst$c[[2]]", "df"))
  expect_identical(names(got), c("lst$a", "lst[[2]]", "lst$c$d", "lst$c[[2]]", "df"))
  expect_identical(got[["lst$a"]], x$lst$a)
  expect_identical(got[["lst[[2]]"]], x$lst[[2]])
  expect_identical(got[["lst$c$d"]], x$lst$c$d)
  expect_identical(got[["lst$c[[2]]"]], x$lst$c[[2]])
  expect_identical(got$df, x$df)
  # a path's parts, in a list; backticks and [["name"]] as R writes them
  parts <- read_rdata(x$file, objects = list(c("lst", "odd name"), list("lst", 3L, 1)))
  expect_identical(unname(parts), list(x$lst$`odd name`, x$lst$c$d))
  expect_identical(names(parts), c("lst$`odd name`", "lst[[3]][[1]]"))
  expect_identical(read_rdata(x$file, "lst[[\"b\"]]")[[1]], x$lst$b)
  # the whole list is still one object
  expect_identical(read_rdata(x$file, "lst")$lst, x$lst)
})

test_that("an .rds file's object is named after the file, and so are its paths", {
  x <- nested_file()
  f <- withr::local_tempfile(fileext = ".rds")
  saveRDS(x$lst, f)
  nm <- sub("\\.rds$", "", basename(f))
  all <- rdata_objects(f, recursive = TRUE)
  expect_identical(all$name[1:3], c(nm, paste0(nm, "$a"), paste0(nm, "$b")))
  expect_identical(read_rdata(f, paste0(nm, "$b"))[[1]], x$lst$b)
})

test_that("a path that leads nowhere says what exists where it stops", {
  x <- nested_file()
  e <- expect_error(read_rdata(x$file, "lst$z"), class = "rdarrow_error")
  expect_match(conditionMessage(e), "'lst$z' not found: 'lst' holds 'a', 'b', 'c', 'odd name'", fixed = TRUE)
  e <- expect_error(read_rdata(x$file, "lst$c$q"), class = "rdarrow_error")
  expect_match(conditionMessage(e), "'lst$c' holds 'd', [[2]]", fixed = TRUE)
  e <- expect_error(read_rdata(x$file, "lst[[9]]"), class = "rdarrow_error")
  expect_match(conditionMessage(e), "'lst' has 4 elements, not 9", fixed = TRUE)
  e <- expect_error(read_rdata(x$file, "df$id$x"), class = "rdarrow_error")
  expect_match(conditionMessage(e), "'df$id' is not a list", fixed = TRUE)
  e <- expect_error(read_rdata(x$file, "nope$a"), class = "rdarrow_error")
  expect_match(conditionMessage(e), "object 'nope' not found in the file; it holds 'lst', 'df'", fixed = TRUE)
  expect_error(rdata_to_arrow(x$file, object = list("lst", 0)), class = "rdarrow_error")
  expect_error(rdata_to_arrow(x$file, object = list(1, "a")), class = "rdarrow_error")
  expect_error(rdata_objects(x$file, recursive = NA), class = "rdarrow_error")
})

test_that("Arrow, IPC and Parquet take nested data frames", {
  skip_if_not_installed("arrow")
  x <- nested_file()
  back <- function(tab) as.data.frame(tab)
  # mtcars' row names come back through rdarrow's own conversion; arrow R
  # loses character row names once tibble is loaded, so it is checked for
  # the values
  expect_identical(as.data.frame(rdata_to_arrow(x$file, object = "lst$a")), x$lst$a)
  s <- rdata_to_arrow(x$file, object = "lst$a")
  expect_identical(back(arrow::as_arrow_table(s)), x$lst$a, ignore_attr = "row.names")
  s <- rdata_to_arrow(x$file, object = c("lst", "b"))
  expect_identical(back(arrow::as_arrow_table(s)), x$lst$b)
  ipc <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(x$file, ipc, object = list("lst", 2))
  expect_identical(back(arrow::read_ipc_file(ipc, as_data_frame = FALSE)), x$lst$b)
  pq <- withr::local_tempfile(fileext = ".parquet")
  rdata_to_parquet(x$file, pq, object = "lst$a")
  expect_identical(back(arrow::read_parquet(pq, as_data_frame = FALSE)), x$lst$a,
                   ignore_attr = "row.names")
  rd <- withr::local_tempfile(fileext = ".RData")
  parquet_to_rdata(pq, rd, name = "a")
  expect_identical(read_rds(rd), x$lst$a)
  # a vector nested in a list is one column, as a top-level vector is
  s <- rdata_to_arrow(x$file, object = "lst$c$d")
  expect_identical(back(arrow::as_arrow_table(s))[[1]], x$lst$c$d)
})

test_that("a dataset takes the same nested data frame from each file", {
  skip_if_not_installed("arrow")
  files <- vapply(1:2, function(i) {
    lst <- list(sales = data.frame(shop = c("a", "b"), amount = c(i, i * 10)), other = 1)
    f <- tempfile(fileext = ".RData")
    save(lst, file = f)
    f
  }, "")
  on.exit(unlink(files))
  out <- withr::local_tempfile()
  rdata_to_dataset(files, out, object = "lst$sales")
  got <- as.data.frame(arrow::open_dataset(out))
  got <- got[order(got$amount), ]
  expect_identical(got$amount, c(1, 2, 10, 20))
})

test_that("the command line lists nested objects and converts them", {
  x <- nested_file()
  r <- run_cli(c("ls", "--recursive", x$file))
  expect_identical(r$status, 0L)
  expect_true(any(grepl("^lst\\$a\\s+data.frame", r$stdout)))
  r <- run_cli(c("ls", "-r", "--json", x$file))
  rows <- jsonlite::fromJSON(paste(r$stdout, collapse = "\n"))
  expect_identical(rows$name[2], "lst$a")
  expect_true(is.na(rows$bytes[2]))
  skip_if_not_installed("arrow")
  pq <- withr::local_tempfile(fileext = ".parquet")
  r <- run_cli(c("to-parquet", x$file, "--object", "lst$b", "-o", pq))
  expect_identical(r$status, 0L, info = paste(r$stderr, collapse = "\n"))
  expect_identical(as.data.frame(arrow::read_parquet(pq, as_data_frame = FALSE)), x$lst$b)
  # as for a top-level object that is not there: a data error
  r <- run_cli(c("to-arrow", x$file, "--object", "lst$z", "-o", tempfile()))
  expect_identical(r$status, 1L)
  expect_true(any(grepl("'lst$z' not found", r$stderr, fixed = TRUE)))
})

test_that("an element of a list is read without decoding its siblings", {
  lst <- list(small = head(mtcars), big = runif(2e6), more = list(x = 1:10, y = runif(1e6)))
  f <- withr::local_tempfile(fileext = ".RData")
  save(lst, file = f)
  # the limit on decoded data is far below what the siblings hold
  withr::local_options(rdarrow.max_memory = 2^20)
  expect_error(read_rdata(f, "lst"), class = "rdarrow_error_limit")
  expect_identical(read_rdata(f, "lst$small")[[1]], lst$small)
  expect_identical(read_rdata(f, "lst$more$x")[[1]], lst$more$x)
  skip_if_not_installed("arrow")
  expect_identical(as.data.frame(rdata_to_arrow(f, object = "lst$small")), lst$small)
})

test_that("a list of data frames is one dataset, partitioned by their names", {
  skip_if_not_installed("arrow")
  by_year <- list(
    `2019` = data.frame(shop = c("a", "b"), amount = c(1, 2)),
    `2020` = data.frame(shop = "c", amount = 3)
  )
  f <- withr::local_tempfile(fileext = ".RData")
  save(by_year, file = f)
  out <- withr::local_tempfile()
  rdata_to_dataset(f, out, object = "by_year", names_to = "year")
  expect_setequal(list.files(out, recursive = TRUE),
                  c("year=2019/part-0.parquet", "year=2020/part-0.parquet"))
  got <- as.data.frame(arrow::open_dataset(out))
  got <- got[order(got$amount), ]
  expect_identical(got$amount, c(1, 2, 3))
  expect_identical(as.character(got$year), c("2019", "2019", "2020"))
  # unnamed elements are numbered; a column of that name already there is an error
  unnamed <- unname(by_year)
  f2 <- withr::local_tempfile(fileext = ".rds")
  saveRDS(unnamed, f2)
  out2 <- withr::local_tempfile()
  rdata_to_dataset(f2, out2)
  expect_setequal(list.files(out2, recursive = TRUE),
                  c("name=1/part-0.parquet", "name=2/part-0.parquet"))
  out3 <- withr::local_tempfile()
  expect_error(rdata_to_dataset(f, out3, object = "by_year", names_to = "shop"),
               "has a column 'shop' already", class = "rdarrow_error")
})

test_that("object paths reach into S4 objects' slots with @, in every reader and the listing", {
  pt_class <- setClass("rdarrowPt", representation(x = "numeric", lab = "character", df = "data.frame",
                                                   parts = "list", extra = "ANY"))
  withr::defer(removeClass("rdarrowPt"))
  pt <- pt_class(x = c(1.5, NA), lab = "p", df = data.frame(a = 1:3, s = c("u", NA, "w")),
                 parts = list(m = matrix(1:4, 2), inner = pt_class(x = 9)), extra = NULL)
  f <- withr::local_tempfile(fileext = ".RData")
  save(pt, file = f)
  got <- read_rdata(f, objects = c("pt@x", "pt@df", "pt@parts$m", "pt@parts$inner@x", "pt@extra"))
  expect_identical(got[["pt@x"]], pt@x)
  expect_identical(got[["pt@df"]], pt@df)
  expect_identical(got[["pt@parts$m"]], pt@parts$m)
  expect_identical(got[["pt@parts$inner@x"]], 9)
  expect_null(got[["pt@extra"]])
  # the same inside an .rds's one object, named by the file
  d <- withr::local_tempdir()
  saveRDS(pt, file.path(d, "pt.rds"))
  expect_identical(read_rdata(file.path(d, "pt.rds"), objects = "pt@df")[[1]], pt@df)
  # a slot holding a data frame goes to Arrow as any object does
  tab <- arrow::as_arrow_table(rdata_to_arrow(f, object = "pt@df"))
  expect_identical(as.data.frame(tab), pt@df)
  # the listing names every slot with its class and size
  all <- rdata_objects(f, recursive = TRUE)
  expect_true(all(c("pt@x", "pt@lab", "pt@df", "pt@parts", "pt@parts$m", "pt@parts$inner",
                    "pt@parts$inner@x", "pt@extra") %in% all$name))
  at <- function(n) all[all$name == n, ]
  expect_identical(at("pt@df")$class, "data.frame")
  expect_identical(c(at("pt@df")$nrow, at("pt@df")$ncol), c(3L, 2L))
  expect_identical(at("pt@x")$length, 2L)
  expect_identical(at("pt@parts$inner")$class, "rdarrowPt")
  expect_identical(at("pt@extra")$type, "NULL")
  expect_false("pt@class" %in% all$name)
  # clear errors: a missing slot names those there are; a list has no slots
  expect_error(read_rdata(f, objects = "pt@nope"), "'pt@nope' not found: 'pt' \\(class rdarrowPt\\) has the slots 'x', 'lab'")
  expect_error(read_rdata(f, objects = "pt@parts@x"), "'pt@parts' is not an S4 object")
  expect_error(read_rdata(f, objects = "pt@"), "object 'pt@' not found in the file")
})

test_that("a Seurat object's counts are reached by pbmc@assays$RNA@counts", {
  seurat <- "SeuratObject"
  skip_if_not(requireNamespace(seurat, quietly = TRUE), "SeuratObject is not installed (tools/test-env.sh installs it)")
  e <- new.env()
  utils::data("pbmc_small", package = seurat, envir = e)
  pbmc <- e$pbmc_small
  f <- withr::local_tempfile(fileext = ".RData")
  save(pbmc, file = f)
  got <- read_rdata(f, objects = c("pbmc@assays$RNA@counts", "pbmc@meta.data", "pbmc@reductions$pca@cell.embeddings"))
  expect_identical(got[[1]], pbmc@assays$RNA@counts)
  expect_identical(got[[2]], pbmc@meta.data)
  expect_identical(got[[3]], pbmc@reductions$pca@cell.embeddings)
  all <- rdata_objects(f, recursive = TRUE)
  counts <- all[all$name == "pbmc@assays$RNA@counts", ]
  expect_identical(counts$class, "dgCMatrix")
  expect_true(all(paste0("pbmc@", methods::slotNames(pbmc)) %in% all$name))
  # the command line lists and converts the same paths
  out <- run_cli(c("ls", "--recursive", f))
  expect_identical(out$status, 0L)
  expect_true(any(grepl("^pbmc@assays\\$RNA@counts +dgCMatrix", out$stdout)))
  pq <- withr::local_tempfile(fileext = ".parquet")
  expect_identical(run_cli(c("to-parquet", f, "--object", "pbmc@meta.data", "-o", pq))$status, 0L)
  expect_identical(nrow(arrow::read_parquet(pq)), nrow(pbmc@meta.data))
})

test_that("a path in an .rds file may start inside its one object, in every reader", {
  d <- local_tempdir()
  f <- file.path(d, "obj.rds")
  obj <- list(a = 1, b = list(c = 1:3, d = "x"), frame = data.frame(x = 1:3, y = c("p", "q", NA)))
  saveRDS(obj, f)
  # inside the object, or at it under the file's object name: the same part
  expect_identical(read_rds(f, object = "b$c"), obj$b$c)
  expect_identical(read_rds(f, object = "obj$b$c"), obj$b$c)
  expect_identical(read_rds(f, object = "b[[2]]"), obj$b[[2]])
  expect_identical(read_rds(f, object = c("b", "c")), obj$b$c)
  expect_identical(read_rds(f, object = "b"), obj$b)
  expect_identical(read_rds(f, object = "frame"), obj$frame)
  expect_identical(read_rds(f), obj)
  expect_identical(read_rdata(f, objects = c("b$c", "obj$b$d")),
                   list(`b$c` = obj$b$c, `obj$b$d` = obj$b$d))
  # the Arrow readers take the same paths
  expect_identical(as.data.frame(rdata_to_arrow(f, object = "frame")), obj$frame)
  expect_identical(as.data.frame(rdata_to_arrow(f, object = "obj$frame")), obj$frame)
  expect_identical(as.data.frame(rdata_to_arrow(f, object = "frame", chunk_size = 2)), obj$frame)
  pq <- file.path(d, "frame.parquet")
  rdata_to_parquet(f, pq, object = "frame")
  back <- file.path(d, "back.rds")
  parquet_to_rdata(pq, back)
  expect_identical(readRDS(back), obj$frame)
  # a part that is not there: an error naming what the object holds
  err <- tryCatch(read_rds(f, object = "b$zz"), error = function(e) e)
  expect_s3_class(err, "rdarrow_error_usage")
  expect_match(conditionMessage(err), "'obj$b$zz' not found", fixed = TRUE)
  expect_match(conditionMessage(err), "holds 'c', 'd'", fixed = TRUE)
  expect_error(read_rds(f, object = "zz"), "'obj$zz' not found", fixed = TRUE)
  # an .RData file's paths still start at its objects
  g <- file.path(d, "two.RData")
  b <- obj$b
  save(b, file = g)
  expect_identical(read_rdata(g, objects = "b$c"), list(`b$c` = obj$b$c))
  expect_error(read_rdata(g, objects = "c"), "not found", class = "rdarrow_error_usage")
})
