# Object stores from R: readers and writers through s3:// against a real
# S3-compatible server (moto's server mode, from the Python environment the
# tests use), started on the loopback interface and stopped at the end;
# objects identical() to load()/readRDS() of the same files, outputs read
# back by R and by the arrow R package.

# The moto server and the environment pointing the engine at it; skips
# loudly when the Python environment has no moto (CI sets
# RDARROW_REQUIRE_STORE=1, where that is a failure).
local_s3 <- function(env = parent.frame()) {
  skip_if_not_installed("processx")
  py <- Sys.getenv("RETICULATE_PYTHON")
  moto <- if (nzchar(py)) file.path(dirname(py), "moto_server") else ""
  if (!nzchar(moto) || !file.exists(moto)) {
    if (identical(Sys.getenv("RDARROW_REQUIRE_STORE"), "1")) {
      stop("moto_server is not installed in RETICULATE_PYTHON's environment (tools/test-env.sh)")
    }
    skip("moto_server is not installed (RETICULATE_PYTHON's environment): the object store tests need it")
  }
  # A port found free can be taken before the server binds it, and a cold
  # start of the server can be slow on a loaded machine: a server that
  # exits is started again on another port, and one that never answers
  # stops the test with what it printed.
  log <- withr::local_tempfile(.local_envir = env, fileext = ".log")
  for (attempt in 1:3) {
    port <- free_port(py)
    server <- processx::process$new(moto, c("-H", "127.0.0.1", "-p", port),
                                    stdout = log, stderr = "2>&1", cleanup = TRUE)
    withr::defer(server$kill(), envir = env)
    deadline <- Sys.time() + 90
    up <- FALSE
    while (server$is_alive() && Sys.time() < deadline) {
      up <- tryCatch({
        con <- socketConnection("127.0.0.1", port, open = "r+b", timeout = 1)
        close(con)
        TRUE
      }, error = function(e) FALSE, warning = function(w) FALSE)
      if (up) break
      Sys.sleep(0.1)
    }
    if (up) break
    server$kill()
  }
  if (!up) {
    stop("moto_server did not start: ", paste(readLines(log, warn = FALSE), collapse = "\n"))
  }
  endpoint <- sprintf("http://127.0.0.1:%d", port)
  withr::local_envvar(c(
    AWS_ACCESS_KEY_ID = "testing", AWS_SECRET_ACCESS_KEY = "topsecretvalue",
    AWS_REGION = "us-east-1", AWS_DEFAULT_REGION = "us-east-1",
    AWS_ENDPOINT_URL = endpoint, AWS_ALLOW_HTTP = "true"
  ), .local_envir = env)
  s3 <- function(code) {
    res <- system2(py, c("-c", shQuote(paste0(
      "import boto3, sys\n",
      "c = boto3.client('s3', endpoint_url='", endpoint, "', region_name='us-east-1')\n",
      code
    ))), stdout = TRUE, stderr = TRUE)
    if (!is.null(attr(res, "status"))) stop(paste(res, collapse = "\n"))
    res
  }
  s3("c.create_bucket(Bucket='lab')")
  list(endpoint = endpoint, s3 = s3,
       put = function(file, key) s3(sprintf("c.upload_file(%s, 'lab', %s)", py_str(file), py_str(key))),
       get = function(key, file) s3(sprintf("c.download_file('lab', %s, %s)", py_str(key), py_str(file))))
}

py_str <- function(x) paste0("'", gsub("'", "\\\\'", x), "'")

# A port the kernel gives as free (bound to port 0 and let go), so the
# choice does not follow the tests' set.seed().
free_port <- function(py) {
  as.integer(system2(py, c("-c", shQuote(paste0(
    "import socket\n", "s = socket.socket()\n", "s.bind(('127.0.0.1', 0))\n",
    "print(s.getsockname()[1])"
  ))), stdout = TRUE))
}

test_that("the readers read from a bucket what load() and readRDS() read from disk", {
  srv <- local_s3()
  dir <- withr::local_tempdir()
  set.seed(1)
  df <- data.frame(i = c(NA, 1:99), d = c(rnorm(99), NA),
                   s = c(NA, sample(c("a", "é", "日本"), 99, TRUE)),
                   f = factor(sample(c("lo", "hi", NA), 100, TRUE)),
                   day = as.Date("2020-01-01") + 0:99, stringsAsFactors = FALSE)
  x <- list(a = 1:3, b = "z")
  for (c in c("gzip", "bzip2", "xz")) {
    save(df, x, file = file.path(dir, paste0(c, ".RData")), compress = c)
    srv$put(file.path(dir, paste0(c, ".RData")), paste0("r/", c, ".RData"))
  }
  saveRDS(df, file.path(dir, "df.rds"), compress = FALSE)
  srv$put(file.path(dir, "df.rds"), "r/df.rds")
  for (c in c("gzip", "bzip2", "xz")) {
    want <- new.env()
    load(file.path(dir, paste0(c, ".RData")), envir = want)
    got <- read_rdata(sprintf("s3://lab/r/%s.RData", c))
    expect_identical(got, as.list(want)[names(got)])
    expect_setequal(names(got), c("df", "x"))
  }
  expect_identical(read_rds("s3://lab/r/df.rds"), readRDS(file.path(dir, "df.rds")))
  expect_identical(rdata_objects("s3://lab/r/xz.RData"), rdata_objects(file.path(dir, "xz.RData")))
  expect_identical(read_rdata("s3://lab/r/gzip.RData", objects = "x$a"), list(`x$a` = 1:3))
  # a glob, expanded by listing the bucket
  files <- rdata_objects("s3://lab/r/*.RData")
  expect_identical(unique(files$file), sprintf("s3://lab/r/%s.RData", c("bzip2", "gzip", "xz")))
  # an object that is not there: a usage error naming the URL
  expect_error(read_rds("s3://lab/r/none.rds"), "s3://lab/r/none.rds': no such object \\(HTTP 404\\)",
               class = "rdarrow_error_usage")
  # a file holding a promise where R keeps none runs nothing from a store
  # either (crafted byte by byte: helper-crafted.R)
  marker <- file.path(dir, "ran")
  p <- promise_cases(marker)$slot
  craft_file(craft_bytes(p$node), file.path(dir, "x.rds"), gzip = TRUE)
  srv$put(file.path(dir, "x.rds"), "r/x.rds")
  err <- expect_error(read_rds("s3://lab/r/x.rds"), class = "rdarrow_error_unsafe")
  expect_match(conditionMessage(err), "'x@foo' is a promise", fixed = TRUE)
  expect_error(read_rds("s3://lab/r/x.rds", trusted = FALSE), class = "rdarrow_error_unsafe")
  expect_error(rdata_to_arrow("s3://lab/r/x.rds"), class = "rdarrow_error_unsafe")
  expect_false(file.exists(marker))
})

test_that("R data goes from a bucket to Parquet, IPC and back into a bucket", {
  srv <- local_s3()
  dir <- withr::local_tempdir()
  df <- data.frame(i = 1:1000, s = rep(c("a", NA), 500), stringsAsFactors = FALSE)
  save(df, file = file.path(dir, "df.RData"))
  srv$put(file.path(dir, "df.RData"), "in/df.RData")
  rdata_to_parquet("s3://lab/in/df.RData", "s3://lab/out/df.parquet")
  rdata_to_parquet(file.path(dir, "df.RData"), file.path(dir, "local.parquet"))
  srv$get("out/df.parquet", file.path(dir, "got.parquet"))
  # the bytes a local conversion writes
  expect_identical(readBin(file.path(dir, "got.parquet"), "raw", 1e7),
                   readBin(file.path(dir, "local.parquet"), "raw", 1e7))
  parquet_to_rdata(file.path(dir, "got.parquet"), file.path(dir, "back.RData"), name = "df")
  back <- new.env()
  load(file.path(dir, "back.RData"), envir = back)
  expect_identical(back$df, df)
  rdata_to_ipc("s3://lab/in/df.RData", "s3://lab/out/df.arrow")
  # writers into the bucket: the files R reads back identical
  parquet_to_rdata(file.path(dir, "got.parquet"), "s3://lab/out/back.rds")
  srv$get("out/back.rds", file.path(dir, "back.rds"))
  expect_identical(readRDS(file.path(dir, "back.rds")), df)
  srv$get("out/df.arrow", file.path(dir, "df.arrow"))
  # any object, saved into the bucket: one gzip member (no index: an
  # upload is not written again at its start), read by R
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  big <- list(fit = fit, x = rnorm(1.2e6))
  write_rds(big, "s3://lab/out/big.rds")
  srv$get("out/big.rds", file.path(dir, "big.rds"))
  con <- gzcon(file(file.path(dir, "big.rds"), "rb"))
  got <- readRDS(con)
  close(con)
  # (the model's formula keeps this test's environment, which changes)
  expect_identical(got$x, big$x)
  expect_identical(coef(got$fit), coef(fit))
  expect_identical(class(got$fit), "lm")
  expect_identical(readBin(file.path(dir, "big.rds"), "raw", 4)[4], as.raw(0))
  write_rdata(fit, file = "s3://lab/out/fit.RData", compress = "xz")
  srv$get("out/fit.RData", file.path(dir, "fit.RData"))
  e <- new.env()
  load(file.path(dir, "fit.RData"), envir = e)
  expect_identical(coef(e$fit), coef(fit))
  expect_identical(e$fit$residuals, fit$residuals)
  ipc_to_rdata(file.path(dir, "df.arrow"), "s3://lab/out/from-ipc.RData", name = "df")
  srv$get("out/from-ipc.RData", file.path(dir, "from-ipc.RData"))
  e <- new.env()
  load(file.path(dir, "from-ipc.RData"), envir = e)
  expect_identical(e$df, df)
  # a dataset under a prefix, partitioned, each file uploaded as it is
  # written: the files of the same conversion on disk
  df2 <- data.frame(i = 1001:1500, s = rep(c("b", "a"), 250), stringsAsFactors = FALSE)
  save(df2, file = file.path(dir, "df2.RData"))
  srv$put(file.path(dir, "df2.RData"), "in/df2.RData")
  rdata_to_dataset("s3://lab/in/df*.RData", "s3://lab/lake/", partitioning = "s")
  rdata_to_dataset(file.path(dir, c("df.RData", "df2.RData")), file.path(dir, "lake"), partitioning = "s")
  keys <- function(prefix) {
    found <- srv$s3(sprintf("print('\\n'.join(o['Key'] for o in c.list_objects_v2(Bucket='lab', Prefix='%s').get('Contents', [])))",
                   prefix))
    found[nzchar(found)]
  }
  local <- sort(list.files(file.path(dir, "lake"), recursive = TRUE))
  listed <- keys("lake/")
  expect_identical(sort(sub("^lake/", "", listed)), local)
  for (k in listed) {
    got <- file.path(dir, "got-lake", sub("^lake/", "", k))
    dir.create(dirname(got), recursive = TRUE, showWarnings = FALSE)
    srv$get(k, got)
    expect_identical(readBin(got, "raw", 1e7), readBin(file.path(dir, "lake", sub("^lake/", "", k)), "raw", 1e7))
  }
  expect_error(rdata_to_dataset("s3://lab/in/df.RData", "s3://lab/lake/"), "not empty")
  # a failure part-way (the second input's columns differ): the files
  # uploaded before it are removed again
  other <- data.frame(x = 1:3)
  save(other, file = file.path(dir, "other.RData"))
  srv$put(file.path(dir, "other.RData"), "in2/z-other.RData")
  srv$put(file.path(dir, "df.RData"), "in2/a-df.RData")
  expect_error(rdata_to_dataset("s3://lab/in2/*.RData", "s3://lab/lake2/"), class = "rdarrow_error")
  expect_identical(keys("lake2/"), character())
})

test_that("storage_options give the endpoint and keys, and secrets stay out of messages", {
  srv <- local_s3()
  dir <- withr::local_tempdir()
  saveRDS(mtcars, file.path(dir, "cars.rds"))
  srv$put(file.path(dir, "cars.rds"), "o/cars.rds")
  withr::local_envvar(c(AWS_ENDPOINT_URL = NA, AWS_ACCESS_KEY_ID = NA, AWS_SECRET_ACCESS_KEY = NA,
                        AWS_ALLOW_HTTP = NA))
  opts <- list(endpoint_url = srv$endpoint, aws_access_key_id = "testing",
               aws_secret_access_key = "topsecretvalue", allow_http = TRUE)
  expect_identical(read_rds("s3://lab/o/cars.rds", storage_options = opts), mtcars)
  expect_identical(rdata_objects("s3://lab/o/cars.rds", storage_options = opts)$nrow, 32L)
  arrow_to_rdata(mtcars, "s3://lab/o/written.rds", storage_options = opts)
  expect_identical(read_rds("s3://lab/o/written.rds", storage_options = opts), mtcars)
  err <- expect_error(read_rds("s3://lab/o/cars.rds", storage_options = c(opts, colour = "red")),
                      "storage option 'colour' is not one of Amazon S3's", class = "rdarrow_error_usage")
  expect_false(grepl("topsecretvalue", conditionMessage(err)))
  expect_error(read_rds("s3://lab/o/cars.rds", storage_options = list("x")), "named list",
               class = "rdarrow_error_usage")
  # Google Cloud and Azure: their URLs and options, checked without a server
  expect_error(read_rds("gs://bucket/x.rds", storage_options = list(colour = "red")),
               "Google Cloud Storage's")
  expect_error(read_rds("az://container/x.rds", storage_options = list(colour = "red", account_key = "hush-hush")),
               "Azure Blob Storage's")
})
