# Files from strangers run no code: a promise outside an environment's
# frame is refused by every reader, on every R version (crafted files,
# byte by byte, in XDR, binary and ASCII, with gzip and without), and
# trusted = FALSE reads data only. Each read is then used as a script
# would use it, and the marker the promise's code would create must not
# exist.

# Use `x` as a script would: print it, take its parts.
use_value <- function(x) {
  utils::capture.output(print(x), str(x))
  if (is.list(x)) for (i in seq_along(x)) force(x[[i]])
  for (a in names(attributes(x))) force(attr(x, a))
  if (isS4(x)) for (s in methods::slotNames(x)) try(force(methods::slot(x, s)), silent = TRUE)
  invisible()
}

expect_unsafe <- function(expr, place) {
  err <- expect_error(expr, class = "rdarrow_error_unsafe")
  expect_true(grepl(place, conditionMessage(err), fixed = TRUE),
              info = conditionMessage(err))
  expect_match(conditionMessage(err), "promise, which would run code from the file when its value is used")
  invisible(err)
}

test_that("a promise outside an environment is refused by every reader, in every format", {
  dir <- withr::local_tempdir()
  marker <- file.path(dir, "ran")
  cases <- promise_cases(marker)
  n <- 0L
  for (format in c("xdr", "binary", "ascii")) {
    for (gzip in c(FALSE, TRUE)) {
      for (case in names(cases)) {
        cs <- cases[[case]]
        bytes <- craft_bytes(cs$node, format, rdata = cs$rdata)
        f <- craft_file(bytes, file.path(dir, if (cs$rdata) "x.RData" else "x.rds"), gzip)
        what <- sprintf("%s, %s, gzip %s", case, format, gzip)
        # listing runs nothing
        listed <- rdata_objects(f, recursive = TRUE)
        expect_true("x" %in% listed$name, info = what)
        # every reader that builds R objects
        expect_unsafe(use_value(read_rdata(f)), cs$place)
        expect_unsafe(use_value(read_rdata(f, trusted = FALSE)), cs$place)
        if (!cs$rdata) {
          expect_unsafe(use_value(read_rds(f)), cs$place)
          # a raw vector's object is named "value"
          expect_unsafe(use_value(read_rds(readBin(f, "raw", file.size(f)))),
                        sub("x", "value", cs$place, fixed = TRUE))
          con <- file(f)
          expect_unsafe(use_value(read_rds(con)), cs$place)
        }
        # and the Arrow converters, with the same words
        expect_unsafe(rdata_to_arrow(f, object = "x"), cs$place)
        expect_unsafe(rdata_to_parquet(f, file.path(dir, "x.parquet"), object = "x"), cs$place)
        expect_false(file.exists(file.path(dir, "x.parquet")), info = what)
        expect_unsafe(rdata_to_ipc(f, file.path(dir, "x.arrow"), object = "x"), cs$place)
        expect_false(file.exists(file.path(dir, "x.arrow")), info = what)
        expect_false(file.exists(marker), info = what)
        n <- n + 1L
      }
    }
  }
  expect_equal(n, 30L)
})

test_that("a promise is refused from lazy-load bases, URLs and several files at once", {
  dir <- withr::local_tempdir()
  marker <- file.path(dir, "ran")
  cases <- promise_cases(marker)
  base <- craft_lazyload(craft_bytes(cases$element$node), file.path(dir, "db"))
  expect_equal(rdata_objects(base)$name, "x")
  expect_unsafe(use_value(read_rdata(base)), "'x[[2]]'")
  expect_unsafe(use_value(read_rdata(paste0(base, ".rdb"), objects = "x")), "'x[[2]]'")
  expect_unsafe(rdata_to_arrow(base), "'x[[2]]'")
  # an object path into a file that holds a promise elsewhere: the whole
  # file is refused
  expect_unsafe(read_rdata(base, objects = "x[[1]]"), "'x[[2]]'")

  web <- file.path(dir, "web")
  dir.create(web)
  for (case in c("top", "attribute", "slot")) {
    craft_file(craft_bytes(cases[[case]]$node), file.path(web, paste0(case, ".rds")), gzip = TRUE)
  }
  url <- local_server(web)
  expect_unsafe(use_value(read_rds(paste0(url, "/top.rds"))), "'top'")
  expect_unsafe(use_value(read_rds(paste0(url, "/slot.rds"))), "'slot@foo'")
  expect_unsafe(use_value(read_rds(gzcon(url(paste0(url, "/attribute.rds"))))), "'attr(attribute, \"foo\")'")
  expect_unsafe(use_value(read_rdata(web)), "promise")
  expect_unsafe(use_value(read_rds(file.path(web, c("top.rds", "slot.rds")))), "'top'")
  expect_unsafe(rdata_to_dataset(file.path(web, "slot.rds"), file.path(dir, "lake")), "'slot@foo'")
  expect_false(dir.exists(file.path(dir, "lake")) && length(list.files(file.path(dir, "lake"))) > 0)
  expect_false(file.exists(marker))
})

test_that("promises in environments' frames read as readRDS() reads them", {
  f <- withr::local_tempfile(fileext = ".rds")
  adder <- function(n) function(x) x + n
  add3 <- adder(1 + 2)
  dots <- (function(...) function() list(...))(1 + 1, "b")
  saveRDS(list(add3 = add3, dots = dots), f)
  want <- readRDS(f)
  got <- read_rds(f)
  expect_identical(serialize(got, NULL), serialize(want, NULL))
  expect_equal(got$add3(1), 4)
  expect_equal(got$dots(), list(2, "b"))
  # as data only, the function is refused by its place
  err <- expect_error(read_rds(f, trusted = FALSE), class = "rdarrow_error_unsafe")
  expect_match(conditionMessage(err), "$add3' is a function, which is code from the file", fixed = TRUE)
  expect_match(conditionMessage(err), "trusted = TRUE")
})

test_that("trusted = FALSE refuses code, active bindings, namespaces not loaded and foreign ALTREP", {
  dir <- withr::local_tempdir()
  f <- file.path(dir, "x.rds")
  refused <- function(obj, what, place) {
    saveRDS(obj, f)
    err <- expect_error(read_rds(f, trusted = FALSE), class = "rdarrow_error_unsafe")
    expect_true(grepl(place, conditionMessage(err), fixed = TRUE), info = conditionMessage(err))
    expect_match(conditionMessage(err), what, fixed = TRUE)
    # the option says the same for a session
    withr::with_options(list(rdarrow.trusted = FALSE), {
      expect_error(read_rdata(f), class = "rdarrow_error_unsafe")
    })
  }
  e <- new.env(parent = emptyenv())
  makeActiveBinding("a", function() 1, e)
  refused(list(1, e), "an active binding", "'x[[2]]$a'")
  refused(list(f = function(x) x), "a function", "'x$f'")
  refused(compiler::cmpfun(function(x) x + 1), "function", "'x'")
  # a namespace that is not loaded: loading it would run its code
  # (any installed package this session has not loaded: other test files
  # load some)
  absent <- sort(setdiff(rownames(utils::installed.packages()), loadedNamespaces()))
  expect_true(length(absent) > 0, info = "an installed namespace that is not loaded")
  ns <- absent[[1]]
  craft_file(craft_bytes(cr_list(cr_ints(1L), cr_namespace(ns))), f)
  before <- loadedNamespaces()
  err <- expect_error(read_rds(f, trusted = FALSE), class = "rdarrow_error_unsafe")
  expect_match(conditionMessage(err), sprintf("'x[[2]]' is a reference to the namespace '%s', which is not loaded", ns),
               fixed = TRUE)
  expect_setequal(loadedNamespaces(), before)
  # a loaded one is data: the namespace itself
  craft_file(craft_bytes(cr_list(cr_ints(1L), cr_namespace("utils"))), f)
  expect_identical(read_rds(f, trusted = FALSE)[[2]], asNamespace("utils"))
  expect_setequal(loadedNamespaces(), before)
  # an ALTREP class of another package: its code would rebuild it
  craft_file(craft_bytes(cr_altrep("vroom_int", "vroom", cr_ints(1:3))), f)
  err <- expect_error(read_rds(f, trusted = FALSE), class = "rdarrow_error_unsafe")
  expect_match(conditionMessage(err), "class 'vroom_int' from package 'vroom'", fixed = TRUE)
  expect_setequal(loadedNamespaces(), before)
  expect_error(read_rds(f, trusted = "no"), class = "rdarrow_error_usage")
})

test_that("trusted = FALSE reads data identical() to readRDS()", {
  skip_if_not_installed("Matrix")
  dir <- withr::local_tempdir()
  f <- file.path(dir, "data.RData")
  # made where a script makes them: their environment is the global one
  fit <- eval(quote(lm(mpg ~ wt + factor(cyl), data = mtcars)), globalenv())
  objs <- list(
    df = data.frame(a = 1:3, b = c("x", NA, "z"), f = factor(c("u", "v", "u"))),
    m = matrix(c(1.5, NA, 3, 4), 2, dimnames = list(c("r1", "r2"), c("c1", "c2"))),
    s = Matrix::sparseMatrix(i = c(1, 3), j = c(2, 2), x = c(1.5, 2), dims = c(3, 3)),
    fo = stats::as.formula("y ~ x + log(z)", env = globalenv()),
    cl = quote(f(x, y = 2)),
    fit = fit,
    seq = 1:1e6,
    env = list2env(list(a = 1, b = "two"), parent = emptyenv())
  )
  env <- list2env(objs)
  save(list = names(objs), envir = env, file = f)
  got <- read_rdata(f, trusted = FALSE)
  load(f, want <- new.env())
  for (n in setdiff(names(objs), "env")) {
    expect_identical(got[[n]], get(n, want), info = n)
  }
  expect_identical(as.list(got$env), as.list(want$env))
  # a data.table's null external pointer is data too
  if (requireNamespace("data.table", quietly = TRUE)) {
    dt <- data.table::data.table(a = 1:3, b = letters[1:3])
    g <- file.path(dir, "dt.rds")
    saveRDS(dt, g)
    expect_identical(read_rds(g, trusted = FALSE), readRDS(g))
  }
})
