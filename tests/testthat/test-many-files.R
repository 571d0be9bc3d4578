# Several files in one call: read_rdata(), read_rds() and rdata_objects()
# of a vector of paths or of a directory read the files on all cores at
# once and give, file by file, exactly what one call per file gives (and
# what load()/readRDS() give); an error in any file is the call's error,
# naming the file.

# A directory of R data files of several kinds: gzip (R's default, small
# and large), bzip2, xz, uncompressed, ASCII, .rds, a subdirectory, a file
# of another kind that is left alone, and a vector large enough to be
# placed in R's memory by a worker.
many_fixture <- function(env = parent.frame()) {
  dir <- withr::local_tempdir(.local_envir = env)
  dir.create(file.path(dir, "sub"))
  set.seed(11)
  saveRDS(mtcars, file.path(dir, "cars.rds"))
  saveRDS(runif(3e5), file.path(dir, "sub", "big.rds"), compress = "xz")
  lst <- list(a = head(iris), b = letters, c = list(d = 1:3))
  save(lst, file = file.path(dir, "lists.RData"), compress = "bzip2")
  chr <- sample(c(letters, NA), 5e4, TRUE)
  fct <- factor(chr)
  save(chr, fct, file = file.path(dir, "strings.rda"), compress = FALSE)
  save(lst, chr, file = file.path(dir, "sub", "ascii.RData"), ascii = TRUE)
  for (i in 1:30) {
    df <- data.frame(i = seq_len(i), x = rnorm(i), s = sample(letters, i, TRUE))
    save(df, file = file.path(dir, sprintf("frame%02d.RData", i)))
  }
  writeLines("not R data", file.path(dir, "notes.txt"))
  dir
}

# What load()/readRDS() give for `f`, named as read_rdata() names them.
base_objects <- function(f) {
  if (grepl("\\.rds$", f)) return(stats::setNames(list(readRDS(f)), sub("\\.rds$", "", basename(f))))
  e <- new.env()
  nms <- load(f, envir = e)
  mget(nms, envir = e)
}

test_that("read_rdata() of a directory reads every R data file in it, as load() gives them", {
  dir <- many_fixture()
  files <- sort(list.files(dir, pattern = "\\.(rda|rdata|rds)$", ignore.case = TRUE, recursive = TRUE))
  got <- read_rdata(dir)
  expect_identical(names(got), file.path(dir, files))
  expect_length(got, 35L)
  for (f in names(got)) {
    expect_identical(got[[f]], base_objects(f), label = f)
    expect_identical(got[[f]], read_rdata(f), label = f)
  }
  # a trailing slash names the same files
  expect_identical(unname(read_rdata(paste0(dir, "/"))), unname(got))
})

test_that("read_rdata() of a vector of paths keeps their order and the names as given", {
  dir <- many_fixture()
  withr::local_dir(dir)
  files <- c("sub/big.rds", "cars.rds", "lists.RData", "frame07.RData", "cars.rds")
  got <- read_rdata(files)
  expect_identical(names(got), files)
  for (i in seq_along(files)) expect_identical(got[[i]], base_objects(files[[i]]), label = files[[i]])
  # objects = applies to every file
  got <- read_rdata(c("lists.RData", "sub/ascii.RData"), objects = "lst$b")
  expect_identical(got, list(lists.RData = list(`lst$b` = letters), `sub/ascii.RData` = list(`lst$b` = letters)))
})

test_that("read_rds() of several files gives their objects, and says which file holds more than one", {
  dir <- many_fixture()
  got <- read_rds(file.path(dir, c("cars.rds", "sub/big.rds", "frame01.RData")))
  expect_identical(unname(got[1:2]), list(mtcars, readRDS(file.path(dir, "sub", "big.rds"))))
  expect_identical(got[[3]], base_objects(file.path(dir, "frame01.RData"))$df)
  expect_identical(names(got)[1], file.path(dir, "cars.rds"))
  err <- expect_error(read_rds(dir), class = "rdarrow_error_usage")
  expect_match(conditionMessage(err), "file '.*strings\\.rda': the file holds 2 objects \\('chr', 'fct'\\)")
})

test_that("rdata_objects() of several files is one listing with a file column", {
  dir <- many_fixture()
  files <- file.path(dir, c("lists.RData", "cars.rds", "strings.rda"))
  got <- rdata_objects(files)
  each <- lapply(files, rdata_objects)
  expect_identical(names(got), c("file", names(each[[1]])))
  expect_identical(got$file, rep(files, vapply(each, nrow, 1L)))
  expect_identical(as.list(got[-1]), as.list(do.call(rbind, each)))
  # recursive listings too
  got <- rdata_objects(files, recursive = TRUE)
  expect_identical(as.list(got[-1]), as.list(do.call(rbind, lapply(files, rdata_objects, recursive = TRUE))))
  # a directory
  all <- rdata_objects(dir)
  expect_identical(unique(all$file), names(read_rdata(dir)))
  expect_identical(nrow(all), sum(vapply(read_rdata(dir), length, 1L)))
})

test_that("an error in any file is the call's error, naming the file, and returns nothing", {
  dir <- many_fixture()
  writeBin(as.raw(c(0x1f, 0x8b, 8, 0, 1, 2, 3)), file.path(dir, "sub", "broken.rds"))
  for (f in list(read_rdata, read_rds, rdata_objects)) {
    err <- expect_error(f(dir), class = "rdarrow_error")
    expect_match(conditionMessage(err), "file '.*broken\\.rds'")
  }
  err <- expect_error(read_rdata(c(file.path(dir, "cars.rds"), file.path(dir, "missing.rds"))),
                      class = "rdarrow_error_io")
  expect_match(conditionMessage(err), "file '.*missing\\.rds': cannot open")
  # a directory among the files stands for its R data files (the engine's
  # one rule, as Python's, the command line's and DuckDB's)
  err <- expect_error(rdata_objects(c(file.path(dir, "cars.rds"), file.path(dir, "sub"))),
                      class = "rdarrow_error")
  expect_match(conditionMessage(err), "file '.*sub/broken\\.rds'")
  empty <- withr::local_tempdir()
  expect_error(read_rdata(empty), "holds no .rda, .RData or .rds file", class = "rdarrow_error_usage")
  expect_error(read_rdata(c("a.rds", NA)), class = "rdarrow_error_usage")
  expect_error(read_rdata(character()), class = "rdarrow_error_usage")
})

test_that("an error in a file while others are being read into R's memory leaves the session sound", {
  dir <- withr::local_tempdir()
  # large vectors the workers have R allocate, and a broken file among them
  for (i in 1:6) saveRDS(rnorm(2e5) + i, file.path(dir, sprintf("v%d.rds", i)))
  writeBin(as.raw(1:9), file.path(dir, "v3.rds"))
  expect_error(read_rds(dir), "file '.*v3\\.rds'", class = "rdarrow_error")
  gc()
  got <- read_rds(file.path(dir, sprintf("v%d.rds", c(1, 2, 4, 5, 6))))
  expect_identical(unname(got), lapply(file.path(dir, sprintf("v%d.rds", c(1, 2, 4, 5, 6))), readRDS))
})

test_that("lazy-load data bases are read among files", {
  base <- file.path(system.file("data", package = "datasets"), "Rdata")
  skip_if_not(file.exists(paste0(base, ".rdb")), "the datasets package has no lazy-load data base")
  f <- withr::local_tempfile(fileext = ".rds")
  saveRDS(mtcars, f)
  got <- read_rdata(c(f, base), objects = NULL)
  expect_identical(got[[1]], stats::setNames(list(mtcars), sub("\\.rds$", "", basename(f))))
  expect_identical(got[[2]][c("iris", "mtcars")], list(iris = datasets::iris, mtcars = datasets::mtcars))
  listed <- rdata_objects(c(base, f))
  expect_true(all(c("iris", "mtcars") %in% listed$name[listed$file == base]))
})
