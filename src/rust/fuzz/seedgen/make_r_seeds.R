# Writes small R data files in every format, version and compression for
# the fuzz seed corpora. Usage: Rscript make_r_seeds.R <outdir>
args <- commandArgs(trailingOnly = TRUE)
out <- args[[1]]
dir.create(out, showWarnings = FALSE, recursive = TRUE)

set.seed(1)
e <- new.env()
assign("x", 1:3, envir = e)
assign("self", e, envir = e)
f <- function(a, b = 2, ...) { z <- a + b; if (z > 3) z * 2 else list(...) }
g <- compiler::cmpfun(function(x, y) { for (i in seq_len(x)) y <- y + i; y })
h <- local({ k <- 10; function(n) n + k })
df <- data.frame(
  i = c(1L, NA, 3L, 4L, 5L),
  d = c(1.5, NA, NaN, Inf, -0.25),
  s = c("a", NA, "\u00e9t\u00e9", "", "longer string"),
  l = c(TRUE, FALSE, NA, TRUE, FALSE),
  f = factor(c("x", "y", NA, "x", "z")),
  o = factor(c("lo", "hi", "lo", NA, "hi"), levels = c("lo", "hi"), ordered = TRUE),
  dt = as.Date("2020-01-01") + c(0, 1, NA, 365, -1),
  ct = as.POSIXct("2021-03-04 05:06:07", tz = "UTC") + c(0, 0.5, NA, 3600, -1),
  dd = as.difftime(c(1, 2.5, NA, 4, 5), units = "mins"),
  stringsAsFactors = FALSE
)
df$lst <- list(1:2, NULL, 3L, integer(0), 5:7)
df$sub <- data.frame(p = 1:5, q = letters[1:5])
df$cpx <- complex(real = 1:5, imaginary = c(0, -1, NA, 2, 3))
df$raw <- as.raw(1:5)
df$hm <- hms::as_hms(c(0, 61, 3600.5, NA, 86399))
df$i64 <- bit64::as.integer64(c(1, 2^40, NA, -5, 0))
ct2 <- as.POSIXct(c("2020-01-01 00:00:00", NA), tz = "")
tb <- tibble::tibble(a = 1:3, b = c("x", "y", "z"))
dtab <- data.table::data.table(a = 1:3, b = c(2.5, NA, 1))
m <- matrix(1:12, 3, dimnames = list(NULL, c("a", "b", "c", "d")))
mc <- matrix(letters[1:6], 2)
arr <- array(1:24, c(2, 3, 4))
lat <- c("caf\xe9", "na\xefve", NA)
Encoding(lat) <- "latin1"
byt <- "\xff\xfe"
Encoding(byt) <- "bytes"
lst <- list(a = 1, b = "two", c = list(d = 3:5, e = NULL), f = quote(x + y), g = as.name("sym"),
            h = expression(1 + 2, sin(pi)), pl = pairlist(a = 1, 2), fo = y ~ x + z, sq = 1:1000,
            rs = seq(0.5, 100, by = 0.5), ds = as.character(1:20), w = c(a = 1.5))
setClass("Pt", representation(x = "numeric", y = "numeric"))
s4 <- new("Pt", x = 1, y = 2)
long_str <- paste(rep("abcdefghij", 2000), collapse = "")
alt_int <- 1:5000
alt_real <- seq(1, 3000, by = 1)
alt_str <- as.character(c(1, 2.5, 1e5, 1e-5, NA))
wrapped <- .Internal(wrap_meta(c(1, 2, 3), 0, 0))
nums <- c(0.1, 1e300, -1e-300, 5e-324, NA, NaN, Inf)
objs <- list(df = df, ct2 = ct2, tb = tb, dtab = dtab, m = m, mc = mc, arr = arr, lat = lat, byt = byt,
             lst = lst, s4 = s4, f = f, g = g, h = h, e = e, long_str = long_str, alt_int = alt_int,
             alt_real = alt_real, alt_str = alt_str, wrapped = wrapped, nums = nums, nul = NULL,
             baseenv = baseenv(), emptyenv = emptyenv(), globalenv = globalenv(), mean = mean,
             sum = sum, `if` = `if`, stats = asNamespace("stats"), pkg = as.environment("package:stats"))

comps <- c("none", "gzip", "bzip2", "xz")
n <- 0
for (ver in 2:3) for (fmt in c("xdr", "ascii", "binary")) for (cmp in comps) {
  ascii <- fmt == "ascii"
  xdr <- fmt != "binary"
  cf <- if (cmp == "none") FALSE else cmp
  # one save() file with the small objects together
  small <- c("df", "lst", "f", "e", "lat", "nums", "m", "alt_str", "wrapped", "s4")
  fn <- file.path(out, sprintf("save_v%d_%s_%s.rda", ver, fmt, cmp))
  env <- list2env(objs[small])
  if (ascii) {
    save(list = small, envir = env, file = fn, version = ver, ascii = TRUE, compress = cf)
  } else {
    con <- switch(cmp, none = file(fn, "wb"), gzip = gzfile(fn, "wb"), bzip2 = bzfile(fn, "wb"), xz = xzfile(fn, "wb"))
    save(list = small, envir = env, file = con, version = ver, ascii = FALSE, compress = FALSE)
    close(con)
    if (!xdr) {
      # native binary save(): R only writes it through serialize(xdr = FALSE)
      raw <- c(charToRaw(sprintf("RDB%d\n", ver)), serialize(as.pairlist(objs[small]), NULL, xdr = FALSE, version = ver))
      con <- switch(cmp, none = file(fn, "wb"), gzip = gzfile(fn, "wb"), bzip2 = bzfile(fn, "wb"), xz = xzfile(fn, "wb"))
      writeBin(raw, con)
      close(con)
    }
  }
  n <- n + 1
  # one RDS per object, varying compression with the object index
  k <- 0
  for (nm in names(objs)) {
    k <- k + 1
    if ((k %% length(comps)) + 1 != match(cmp, comps) && !(nm %in% c("df", "lst"))) next
    fn <- file.path(out, sprintf("rds_%s_v%d_%s_%s.rds", nm, ver, fmt, cmp))
    con <- switch(cmp, none = file(fn, "wb"), gzip = gzfile(fn, "wb"), bzip2 = bzfile(fn, "wb"), xz = xzfile(fn, "wb"))
    r <- try(serialize(objs[[nm]], con, ascii = ascii, xdr = xdr, version = ver), silent = TRUE)
    close(con)
    if (inherits(r, "try-error")) unlink(fn)
    n <- n + 1
  }
}
# the "r" metadata strings arrow R writes (for the IPC seeds)
md <- list(attributes = list(class = c("tbl_df", "tbl", "data.frame")),
           columns = list(a = NULL, b = list(attributes = list(label = "B"), columns = NULL)))
writeLines(rawToChar(serialize(md, NULL, ascii = TRUE)), file.path(dirname(out), "r_metadata_ascii.txt"))
big <- md; big$attributes$note <- paste(rep("x", 30000), collapse = "")
writeBin(serialize(memCompress(serialize(big, NULL, ascii = TRUE), "gzip"), NULL, ascii = TRUE),
         file.path(dirname(out), "r_metadata_gz.txt"))
cat("wrote", n, "R seed files\n")
