# Large atomic vectors are decoded straight into the R vectors that
# read_rdata() and read_rds() return (no engine buffer copied into R). These
# tests check what that must not change: every type and every place such a
# vector sits gives what load()/readRDS() give, a vector asked for twice is
# two vectors, objects R rebuilds itself still see the values, and a file
# cut short halfway gives an error and no object.

big_objects <- function() {
  set.seed(42)
  n <- 40000L # above the size where payloads go to R vectors (64 KB)
  list(
    dbl = c(rnorm(n), NA, NaN, Inf, -Inf, -0),
    int = c(sample.int(1000L, n, TRUE), NA_integer_),
    lgl = c(sample(c(TRUE, FALSE, NA), n, TRUE)),
    cplx = complex(real = rnorm(n), imaginary = c(NA, rnorm(n - 1))),
    raw = as.raw(sample(0:255, 3 * n, TRUE)),
    mat = matrix(rnorm(2 * n), ncol = 4, dimnames = list(NULL, letters[1:4])),
    df = data.frame(a = rnorm(n), b = seq_len(n), f = factor(sample(letters, n, TRUE)),
                    d = as.Date("2020-01-01") + seq_len(n), s = sample(month.name, n, TRUE)),
    nested = list(list(x = runif(n), y = list(z = 1:n)), small = 1:3),
    named = structure(runif(n), names = paste0("n", seq_len(n)), class = "myclass")
  )
}

test_that("large vectors read into R are identical to load() in every format", {
  objs <- big_objects()
  env <- list2env(objs)
  dir <- tempfile("rmem"); dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  cases <- list(
    gzip = list(compress = TRUE), none = list(compress = FALSE),
    xz = list(compress = "xz"), native = list(compress = FALSE, ascii = FALSE),
    ascii = list(compress = FALSE, ascii = TRUE)
  )
  for (nm in names(cases)) {
    f <- file.path(dir, paste0(nm, ".RData"))
    args <- cases[[nm]]
    if (identical(nm, "native")) {
      # binary, native byte order (not XDR): save() writes it with xdr = FALSE
      con <- file(f, "wb")
      writeBin(charToRaw("RDB2\n"), con)
      serialize(as.pairlist(objs), con, ascii = FALSE, xdr = FALSE, version = 2)
      close(con)
    } else {
      do.call(save, c(list(list = names(objs), envir = env, file = f), args))
    }
    expected <- new.env()
    load(f, expected)
    got <- read_rdata(f)
    for (o in names(objs)) {
      expect_identical(got[[o]], get(o, expected), info = paste(nm, o))
    }
  }
  for (o in c("dbl", "mat", "df", "nested")) {
    f <- file.path(dir, paste0(o, ".rds"))
    saveRDS(objs[[o]], f, compress = FALSE)
    expect_identical(read_rds(f), readRDS(f), info = o)
  }
})

test_that("an object asked for twice is two objects: changing one leaves the other", {
  objs <- big_objects()
  f <- tempfile(fileext = ".RData")
  on.exit(unlink(f), add = TRUE)
  dbl <- objs$dbl
  nested <- objs$nested
  save(dbl, nested, file = f)
  got <- read_rdata(f, objects = c("dbl", "dbl", "nested[[1]]$x", "nested"))
  expect_identical(got[[1]], objs$dbl)
  expect_identical(got[[2]], objs$dbl)
  got[[1]][1] <- 12345
  expect_identical(got[[2]], objs$dbl)
  expect_identical(got[[3]], objs$nested[[1]]$x)
  expect_identical(got[[4]], objs$nested)
  a <- got[[4]]
  a[[1]]$x[1] <- -1
  expect_identical(got[[4]], objs$nested)
  expect_identical(got[[3]], objs$nested[[1]]$x)
})

test_that("objects R rebuilds itself keep the large vectors they hold", {
  x <- runif(50000)
  f_env <- local({ y <- x; function() y })
  holder <- list(values = x, fun = function(a) a + 1, ints = 1:60000 * 2L)
  f <- tempfile(fileext = ".RData")
  on.exit(unlink(f), add = TRUE)
  save(holder, f_env, x, file = f)
  expected <- new.env()
  load(f, expected)
  got <- read_rdata(f)
  expect_identical(got$holder$values, x)
  expect_identical(got$holder$ints, expected$holder$ints)
  expect_identical(got$holder$fun(1), 2)
  expect_identical(get("y", environment(got$f_env)), x)
  expect_identical(got$x, x)
})

test_that("a file cut short inside a large vector gives an error and no object", {
  x <- runif(200000)
  y <- sample.int(1e6L, 300000L, TRUE)
  f <- tempfile(fileext = ".RData")
  g <- tempfile(fileext = ".RData")
  on.exit(unlink(c(f, g)), add = TRUE)
  save(x, y, file = f, compress = FALSE)
  bytes <- readBin(f, "raw", file.size(f))
  # the stream cut in the middle of y's payload, then compressed (so that
  # its length is not known before the end: the payload is decoded until
  # the stream runs out)
  con <- gzfile(g, "wb")
  writeBin(bytes[seq_len(length(bytes) - 400000)], con)
  close(con)
  res <- NULL
  err <- tryCatch({ res <- read_rdata(g); NULL }, error = function(e) e)
  expect_s3_class(err, "rdarrow_error")
  expect_match(conditionMessage(err), "'y'")
  expect_null(res)
  # the session goes on: the same file, whole, still reads
  expect_identical(read_rdata(f)$y, y)
  invisible(gc())
})
