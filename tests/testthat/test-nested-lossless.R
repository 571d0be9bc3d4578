# Values nested in lists come back as they went, byte for byte: factors
# keep their own levels and codes at any depth (lists of lists, list
# columns, list-mode matrices), integer64 keeps its class and values,
# logical and integer elements their types, doubles their bits, and
# environments whether they were hashed and their table. Each object goes
# through every route (the C stream, an arrow R Table, IPC file and
# stream, Parquet, the command line, and Python's write_rds() of what
# read_table() gave) and is compared with R's own save()/load() circle of
# the same object by serialize() bytes. Version 2 serializations are
# compared: they hold every value, attribute and environment table as the
# version 3 ones do, but write ALTREP vectors (a compact 1:3) as their
# values, a representation R's own identical() does not see either.

skip_on_cran()

nl_bytes <- function(x) serialize(x, NULL, version = 2L)

# What R's own circle gives: load() of save() of `x`.
nl_r_circle <- function(x) {
  f <- tempfile(fileext = ".RData")
  on.exit(unlink(f))
  e <- new.env(parent = emptyenv())
  e$x <- x
  save(list = "x", envir = e, file = f)
  e2 <- new.env(parent = emptyenv())
  load(f, envir = e2)
  e2$x
}

# A hashed environment (new.env()) with `n` bindings, and an unhashed one.
nl_env <- function(n, hash = TRUE, prefix = "v") {
  e <- new.env(hash = hash, parent = globalenv())
  for (k in seq_len(n)) assign(paste0(prefix, k), k * 1.5, envir = e)
  e
}

nl_objects <- function() {
  set.seed(38)
  f5 <- function(n) factor(sample(letters[1:5], n, TRUE), levels = letters[1:5])
  digits <- function(i) factor(c("1", "2", "7")[i])
  i64 <- bit64::as.integer64(c("0", NA, "-5", "9007199254740993", "1", "-9223372036854775807"))
  o <- list()
  # factors in lists, equal levels and different levels
  o$factors_same <- list(train = list(y = digits(sample(3, 10, TRUE))),
                         test = list(y = digits(sample(3, 7, TRUE))))
  o$factors_different <- list(a = factor(c("x", "y", "x")),
                              b = factor(c("p", "q"), levels = c("q", "p", "r")),
                              c = factor(character(0)),
                              d = factor(c(NA, "u", "v"), levels = c("v", "u")),
                              e = factor(c("lo", "hi"), levels = c("lo", "mid", "hi"), ordered = TRUE))
  # a simulation study's results: a list of lists of factors of 5 levels
  o$lists_of_factors <- lapply(1:7, function(k) lapply(1:3, function(l) f5(6)))
  o$lists_of_factors_different <- lapply(1:4, function(k) list(
    f = factor(sample(letters[k:(k + 3)], 5, TRUE), levels = letters[(k + 3):k]),
    g = f5(k)))
  # many levels in one element, few in another (dictionary indices of
  # different widths)
  o$factors_wide <- list(factor(paste0("l", 1:300))[c(1, 300, 150)], factor("only"))
  # a list column of factors, and of lists of factors
  o$frame_list_factors <- data.frame(id = 1:3, f = I(list(
    factor(c("a", "b")), factor("c"), factor(c("b", "b"), levels = c("b", "z")))))
  o$frame_list_lists <- data.frame(id = 1:2, f = I(list(
    list(factor("a"), factor(c("b", "a"))), list(factor("q", levels = c("q", "a"))))))
  # a list column added with `$<-`, which puts the frame's class last
  d <- data.frame(id = 1:3)
  d$f <- list(factor(c("a", "b")), factor("c"), factor(c("b", "b"), levels = c("b", "z")))
  o$frame_dollar_list <- d
  # list-mode matrices of factors, at the top and inside a list
  o$matrix_factors <- matrix(list(factor(c("u", "v")), factor("w"), factor(c("b", "a"), levels = c("b", "a")),
                                  factor(c("w", "u"))), 2)
  o$list_matrix_factors <- list(m = matrix(list(factor("a"), factor(c("b", "c")), NULL,
                                                factor("z", levels = c("z", "a"))), 2,
                                           dimnames = list(c("r1", "r2"), c("c1", "c2"))))
  # integer64 with NA, 0, negative and large values
  o$integer64_list <- list(a = i64, b = i64[c(1, 3, 5)], c = bit64::as.integer64(c(0, -1)))
  o$integer64_lists <- list(list(x = i64[1:2]), list(x = i64), list(x = bit64::as.integer64(integer(0))))
  o$integer64_matrix <- matrix(list(i64[c(1, 2, 3)], NULL, i64[4:6], i64[5]), 2)
  o$integer64_array <- array(list(i64[1], i64[2:3], i64, NULL, i64[5], i64[6], i64[1:4], i64[3]),
                             c(2, 2, 2))
  # nested numeric lists: signed zeros, NaN and NA, infinities, a NaN
  # with a payload of its own, integers and logicals among doubles
  odd_nan <- readBin(as.raw(c(7, 0, 0, 0, 0, 0, 0xf8, 0x7f)), "double", endian = "little")
  o$quadrature <- lapply(1:20, function(k) list(
    nodes = c(-0, 0, NaN, NA, Inf, -Inf, k / 3, odd_nan), weights = c(k, 0.5), n = k, ok = k %% 2 == 0))
  o$numbers_mixed <- list(1L, 2.5, NA, c(TRUE, NA), -0, c(a = 1L, b = NA))
  # environments: hashed (with a table that grew) and unhashed, in a list
  # and as a formula's
  fo <- y ~ a + b
  environment(fo) <- nl_env(120, prefix = "f")
  o$environments <- list(n = 1:3, hashed = nl_env(100), small = nl_env(3),
                         unhashed = nl_env(40, hash = FALSE), formula = fo)
  o
}

# The routes: each gives back the object `x` went through.
nl_routes <- function(x, dir) {
  src <- file.path(dir, "x.rds")
  saveRDS(x, src)
  back <- function(out) readRDS(out)
  ipc <- function(format, file) {
    p <- file.path(dir, file)
    out <- file.path(dir, paste0("ipc_", format, ".rds"))
    rdata_to_ipc(src, p, format = format)
    ipc_to_rdata(p, out)
    back(out)
  }
  routes <- list(
    stream = function() {
      out <- file.path(dir, "stream.rds")
      arrow_to_rdata(rdata_to_arrow(src), out)
      back(out)
    },
    table = function() {
      out <- file.path(dir, "table.rds")
      arrow_to_rdata(arrow::as_arrow_table(rdata_to_arrow(src)), out)
      back(out)
    },
    ipc_file = function() ipc("file", "x.arrow"),
    ipc_stream = function() ipc("stream", "x.arrows"),
    parquet = function() {
      p <- file.path(dir, "x.parquet")
      out <- file.path(dir, "parquet.rds")
      rdata_to_parquet(src, p)
      parquet_to_rdata(p, out)
      back(out)
    },
    command_line = function() {
      cli <- cli_binary()
      p <- file.path(dir, "cli.arrow")
      out <- file.path(dir, "cli.rds")
      lc_cli_run(cli, c("to-arrow", src, "-o", p))
      lc_cli_run(cli, c("to-rdata", p, "-o", out))
      back(out)
    },
    python = function() {
      out <- file.path(dir, "python.rds")
      rt_python(c(
        "import sys, rdarrow",
        "rdarrow.write_rds(rdarrow.read_table(sys.argv[1]), sys.argv[2])"
      ), src, out)
      back(out)
    }
  )
  routes
}

test_that("the nested objects are what they say they are", {
  o <- nl_objects()
  expect_identical(levels(o$factors_different$b), c("q", "p", "r"))
  expect_identical(env.profile(o$environments$hashed)$size > 29L, TRUE)
  expect_null(env.profile(o$environments$unhashed))
  expect_true(is.list(o$integer64_matrix) && identical(dim(o$integer64_matrix), c(2L, 2L)))
  expect_s3_class(o$integer64_matrix[[1]], "integer64")
  expect_identical(1 / o$quadrature[[1]]$nodes[[1]], -Inf)
  expect_true(is.nan(o$quadrature[[1]]$nodes[[8]]))
  expect_false(identical(writeBin(o$quadrature[[1]]$nodes[[8]], raw()), writeBin(NaN, raw())))
})

test_that("values nested in lists come back byte for byte through every route", {
  skip_if_not_installed("arrow", minimum_version = NULL)
  skip_if_not_installed("bit64")
  objs <- nl_objects()
  dir <- local_tempdir()
  for (nm in names(objs)) {
    ref <- nl_r_circle(objs[[nm]])
    routes <- nl_routes(objs[[nm]], dir)
    for (route in names(routes)) {
      got <- tryCatch(suppressWarnings(routes[[route]]()), error = function(e) e)
      if (inherits(got, "error")) {
        fail(sprintf("%s, route %s: %s", nm, route, conditionMessage(got)))
        next
      }
      same <- identical(nl_bytes(got), nl_bytes(ref))
      expect(same, sprintf("%s, route %s: serialize() differs from R's save()/load() circle%s", nm, route,
                           if (identical(got, ref)) " (identical() holds)" else paste0(": ", lc_first_diff(got, ref))))
      if (!grepl("^environments", nm)) {
        expect(identical(got, ref), sprintf("%s, route %s: not identical()", nm, route))
      }
    }
  }
})

test_that("factors in lists keep exactly their own levels and codes", {
  o <- nl_objects()
  dir <- local_tempdir()
  x <- o$factors_same
  got <- nl_routes(x, dir)$stream()
  expect_identical(levels(got$test$y), c("1", "2", "7"))
  expect_identical(as.integer(got$test$y), as.integer(x$test$y))
  got <- nl_routes(o$lists_of_factors, dir)$ipc_file()
  expect_identical(lengths(lapply(unlist(got, recursive = FALSE), levels)), rep(5L, 21L))
  # what Arrow consumers see: one dictionary per list column, each level once
  p <- file.path(dir, "f.arrow")
  saveRDS(o$factors_different, file.path(dir, "f.rds"))
  rdata_to_ipc(file.path(dir, "f.rds"), p)
  out <- rt_python(c(
    "import sys, pyarrow.ipc as ipc",
    "t = ipc.open_file(sys.argv[1]).read_all()",
    "col = t.column(0).combine_chunks()",
    "d = col.values.dictionary.to_pylist()",
    "print(len(d) == len(set(d)), sorted(map(str, d)))",
    "print([[str(v) for v in e] for e in col.to_pylist()])"
  ), p)
  expect_identical(out[[1]], "True ['hi', 'lo', 'mid', 'p', 'q', 'r', 'u', 'v', 'x', 'y']")
  expect_identical(out[[2]], "[['x', 'y', 'x'], ['p', 'q'], [], ['None', 'u', 'v'], ['lo', 'hi']]")
})

test_that("environments keep their hash tables in read_rdata() from a file and from a lazy-load data base", {
  dir <- local_tempdir()
  # at the top of a file, and inside a formula
  e <- nl_env(150)
  u <- nl_env(60, hash = FALSE)
  fo <- y ~ x
  environment(fo) <- nl_env(33, prefix = "w")
  objs <- list(e = e, u = u, fo = fo)
  f <- lc_save(objs, file.path(dir, "envs.RData"))
  ref <- new.env()
  load(f, envir = ref)
  got <- read_rdata(f)
  for (nm in names(objs)) {
    expect(identical(nl_bytes(got[[nm]]), nl_bytes(ref[[nm]])),
           sprintf("read_rdata() of %s: serialize() differs from load()'s", nm))
  }
  expect_identical(env.profile(got$e)$size, env.profile(ref$e)$size)
  expect_null(env.profile(got$u))

  # a lazy-load data base: environments are made as lazyLoad() makes them
  # (hashed, 29 slots grown as R grows them, their parents), whatever
  # the saved environment was
  db <- new.env()
  db$with_env <- list(e = nl_env(200, prefix = "caf\u00e9_"), small = nl_env(2), fo = fo)
  db$locked <- local({
    z <- nl_env(30, hash = FALSE)
    lockEnvironment(z)
    list(z = z)
  })
  db$frame <- data.frame(a = 1:3)
  base <- file.path(dir, "db")
  tools:::makeLazyLoadDB(db, base)
  ll <- new.env()
  lazyLoad(base, envir = ll)
  for (nm in ls(db)) {
    want <- get(nm, ll)
    got <- read_rdata(paste0(base, ".rdb"), nm)[[nm]]
    expect(identical(nl_bytes(got), nl_bytes(want)),
           sprintf("read_rdata() of %s from a lazy-load data base: serialize() differs from lazyLoad()'s", nm))
  }
  expect_true(environmentIsLocked(read_rdata(paste0(base, ".rdb"), "locked")$locked$z))

  # a package's data base: nlme's (its grouped data hold formulas)
  rdb <- system.file("data", "Rdata.rdb", package = "nlme")
  if (!nzchar(rdb)) skip("the nlme package is not installed (tools/test-env.sh installs r-cran-nlme)")
  pk <- new.env()
  lazyLoad(sub("\\.rdb$", "", rdb), envir = pk)
  for (nm in c("bdf", "Orthodont", "Oxboys", "Pixel")) {
    expect(identical(nl_bytes(read_rdata(rdb, nm)[[nm]]), nl_bytes(get(nm, pk))),
           sprintf("nlme's %s: serialize() differs from lazyLoad()'s", nm))
  }
})
