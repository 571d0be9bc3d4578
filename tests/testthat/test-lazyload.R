# Lazy-load data bases (.rdb/.rdx): every installed package's data sets,
# and bases written by R in each compression, read as lazyLoad() gives them.

lazy_env <- function(base) {
  e <- new.env()
  lazyLoad(base, envir = e)
  # promises forced, as R does when an object is used
  for (n in ls(e, all.names = TRUE)) force(get(n, envir = e))
  e
}

test_that("every data set of every installed package is what lazyLoad() gives", {
  dbs <- unique(normalizePath(Sys.glob(file.path(c(.Library, .libPaths()), "*", "data", "Rdata.rdb"))))
  # datasets and lattice at least are installed with R here
  expect_gt(length(dbs), 1L)
  n_objects <- 0L
  for (db in dbs) {
    base <- sub("\\.rdb$", "", db)
    e <- lazy_env(base)
    names <- ls(e, all.names = TRUE)
    listed <- rdata_objects(db)
    expect_setequal(listed$name, names)
    # the base path works as the .rdb does, and so does the .rdx
    expect_identical(rdata_objects(base)$name, listed$name)
    expect_identical(rdata_objects(paste0(base, ".rdx"))$name, listed$name)
    got <- read_rdata(db)
    for (n in names) {
      # an object holding environments (a formula's) is compared by its
      # serialize() bytes (rt_same(), helper-routes.R): two reads never
      # give identical() environments, but the same bytes, hash tables
      # included
      expect(rt_same(got[[n]], get(n, envir = e)), sprintf("%s %s: not what lazyLoad() gives", db, n))
      expect_identical(listed$class[listed$name == n], paste(class(got[[n]]), collapse = "/"),
                       info = paste(db, n))
    }
    n_objects <- n_objects + length(names)
  }
  expect_gt(n_objects, 100L)
  # one object alone, by name and by path
  db <- file.path(.Library, "datasets", "data", "Rdata.rdb")
  expect_identical(read_rdata(db, "mtcars")$mtcars, datasets::mtcars)
  expect_identical(read_rdata(db, "iris$Species")[[1]], datasets::iris$Species)
})

test_that("bases R writes in every compression read back identical", {
  e <- new.env()
  e$df <- data.frame(x = c(1.5, NA), s = c("a", "é"), f = factor(c("u", NA)))
  e$v <- 1:1000
  e$l <- list(a = letters, b = list(c = TRUE))
  e$m <- matrix(rnorm(20), 4)
  for (compress in list(FALSE, TRUE, 2L, 3L)) {
    base <- file.path(withr::local_tempdir(), "db")
    tools:::makeLazyLoadDB(e, base, compress = compress)
    want <- lazy_env(base)
    got <- read_rdata(paste0(base, ".rdb"))
    expect_setequal(names(got), ls(want))
    for (n in ls(want)) expect_identical(got[[n]], get(n, envir = want), info = paste(deparse(compress), n))
    skip_if_not_installed("arrow")
    s <- rdata_to_arrow(base, object = "df")
    expect_identical(as.data.frame(arrow::as_arrow_table(s)), e$df)
  }
})

test_that("a broken base says what is wrong", {
  e <- new.env()
  e$x <- 1:10
  e$y <- letters
  dir <- withr::local_tempdir()
  base <- file.path(dir, "db")
  tools:::makeLazyLoadDB(e, base, compress = TRUE)
  # no index beside it
  lone <- file.path(dir, "lone.rdb")
  file.copy(paste0(base, ".rdb"), lone)
  expect_error(rdata_objects(lone), "has no index", class = "rdarrow_error")
  # an index that points past the end of the entries
  cut <- file.path(dir, "cut")
  file.copy(paste0(base, ".rdx"), paste0(cut, ".rdx"))
  bytes <- readBin(paste0(base, ".rdb"), "raw", file.size(paste0(base, ".rdb")))
  writeBin(bytes[seq_len(length(bytes) - 10L)], paste0(cut, ".rdb"))
  err <- expect_error(read_rdata(paste0(cut, ".rdb")), class = "rdarrow_error")
  expect_match(conditionMessage(err), "past|bytes .* which has|cannot be decompressed|holds")
  # damaged entries are refused, never a crash
  for (k in seq(5L, length(bytes), by = 7L)) {
    bad <- bytes
    bad[k] <- as.raw(bitwXor(as.integer(bad[k]), 0x55L))
    writeBin(bad, paste0(cut, ".rdb"))
    res <- tryCatch(read_rdata(paste0(cut, ".rdb")), rdarrow_error = function(e) "refused")
    expect_true(identical(res, "refused") || is.list(res))
  }
})

test_that("the command line lists and converts a package's data sets", {
  db <- file.path(.Library, "datasets", "data", "Rdata.rdb")
  r <- run_cli(c("ls", db))
  expect_identical(r$status, 0L)
  expect_true(any(grepl("^mtcars\\s+data.frame", r$stdout)))
  skip_if_not_installed("arrow")
  pq <- withr::local_tempfile(fileext = ".parquet")
  r <- run_cli(c("to-parquet", db, "--object", "airquality", "-o", pq))
  expect_identical(r$status, 0L, info = paste(r$stderr, collapse = "\n"))
  expect_identical(as.data.frame(arrow::read_parquet(pq, as_data_frame = FALSE)), datasets::airquality)
})

test_that("environments the objects share are one environment, as lazyLoad() makes them", {
  e <- new.env()
  make <- function() {
    count <- 1
    list(get = function() count, set = function(v) count <<- v)
  }
  acc <- make()
  e$get <- acc$get
  e$set <- acc$set
  e$fit <- local({ w <- 2; y ~ x + w })
  base <- file.path(withr::local_tempdir(), "db")
  tools:::makeLazyLoadDB(e, base, compress = TRUE)
  expect_gt(length(readRDS(paste0(base, ".rdx"))$references), 0L)
  got <- read_rdata(paste0(base, ".rdb"))
  # the closures share their environment, as the lazy-loaded ones do
  expect_identical(environment(got$get), environment(got$set))
  expect_identical(got$get(), 1)
  got$set(5)
  expect_identical(got$get(), 5)
  want <- lazy_env(base)
  expect_true(identical(got$get, want$get, ignore.environment = TRUE))
  expect_identical(get("w", environment(got$fit)), 2)
  expect_identical(deparse(got$fit), deparse(want$fit))
})

test_that("a package's code data base reads, its functions those R loads", {
  db <- file.path(.Library, "stats", "R", "stats.rdb")
  listed <- rdata_objects(db)
  expect_gt(nrow(listed), 500L)
  got <- read_rdata(db, c("sd", "median", "lm"))
  expect_identical(got$sd, stats::sd)
  expect_identical(got$median, stats::median)
  expect_identical(got$lm, stats::lm)
})

test_that("objects of a save() file that share an environment share it when read", {
  make <- function() {
    count <- 1
    list(get = function() count, set = function(v) count <<- v)
  }
  acc <- make()
  get_count <- acc$get
  set_count <- acc$set
  f <- withr::local_tempfile(fileext = ".RData")
  save(get_count, set_count, file = f)
  got <- read_rdata(f)
  got$set_count(7)
  expect_identical(got$get_count(), 7)
  # as load() gives them
  e <- new.env()
  load(f, envir = e)
  e$set_count(7)
  expect_identical(e$get_count(), 7)
})

test_that("a dataset takes a data frame from a lazy-load base", {
  skip_if_not_installed("arrow")
  out <- withr::local_tempfile()
  rdata_to_dataset(file.path(.Library, "datasets", "data", "Rdata"), out, object = "iris",
                   partitioning = "Species")
  got <- as.data.frame(arrow::open_dataset(out))
  expect_identical(nrow(got), 150L)
  expect_setequal(as.character(got$Species), levels(datasets::iris$Species))
})
