# Shared by the writer tests (test-writer.R, test-write-rds.R).

# Objects for the writer tests: every kind of node the format has. Doubles
# are ones that R's ASCII format ("%.16g") carries exactly, so rewriting to
# ASCII must give them back too.
writer_objects <- function() {
  setClass("RdarrowW", representation(x = "numeric"), where = environment())
  setClass("RdarrowWNum", contains = "numeric", representation(u = "character"),
           where = environment())
  cyc <- new.env(parent = globalenv())
  cyc$self <- cyc
  cyc$v <- 1:3 + 0L
  locked <- new.env(parent = emptyenv())
  locked$a <- 1
  lockEnvironment(locked, bindings = TRUE)
  active <- new.env(parent = emptyenv())
  makeActiveBinding("ab", make_closure("function() 7"), active)
  fml <- y ~ x + z
  environment(fml) <- globalenv()
  latin1 <- iconv("caf\u00e9", "UTF-8", "latin1")
  bytes <- "\xff\x01"
  Encoding(bytes) <- "bytes"
  native <- "na\u00efve"
  Encoding(native) <- "unknown"
  df <- data.frame(i = c(1L, NA, 3L), d = c(1.5, NaN, -0), s = c("a", NA, "\u00e9"),
                   f = factor(c("x", "y", NA)), stringsAsFactors = FALSE)
  df$l <- I(list(1, "a", NULL))
  objs <- list(
    lgl = c(TRUE, NA, FALSE), int = c(.Machine$integer.max, NA, -1L, 0L),
    dbl = c(0, -0, NA, NaN, Inf, -Inf, 1.5, -2.25, 1e300, 123456.75, 1e-200),
    nan_payload = readBin(as.raw(c(0x23, 0x01, 0, 0, 0, 0, 0xf8, 0x7f)), "double",
                          endian = "little"),
    cpl = complex(real = c(1, NA, -0), imaginary = c(NaN, 2.5, Inf)),
    raw = as.raw(c(0, 127, 255)), nul = NULL,
    strs = c("plain", "\u00e9t\u00e9 \u2603", latin1, bytes, native, NA, ""),
    long = strrep("0123456789", 1e5),
    fct = factor(c("b", "a", NA), levels = c("b", "a")),
    ord = factor("m", levels = c("l", "m"), ordered = TRUE),
    date = as.Date("2024-02-29") + c(0, NA),
    ct = as.POSIXct("2024-01-01 12:00:00", tz = "Asia/Tokyo"),
    df = df, cars = mtcars, zero = mtcars[0, 0],
    mat = matrix(1:6, 2, dimnames = list(c("r1", "r2"), NULL)),
    lst = list(a = 1, list(b = list(c = "deep")), NULL),
    pl = pairlist(x = 1, 2), fml = fml,
    lang = quote(f(x, y = g(z), ...)), expr = expression(a, 1 + 2),
    sym = as.name("s y m"),
    fun = make_closure("function(a, b = 2) a * b"),
    fun_src = make_closure("function(a) {\n  a + 1 # one\n}", keep.source = TRUE),
    fun_bc = compiler::cmpfun(make_closure("function(n) n * 2")),
    bi = sum, sp = `for`,
    cyc = cyc, locked = locked, active = active,
    envs = list(globalenv(), baseenv(), emptyenv(), asNamespace("stats")),
    s4 = new("RdarrowW", x = c(1, 2)), s4num = new("RdarrowWNum", 3.5, u = "kg"),
    xp = new("externalptr"),
    seq = 1:100, seq_real = 3e9:(3e9 + 3), defer = as.character(1:4),
    wrapped = sort(c(2.5, 1.5)), big_seq = seq_len(1e6)
  )
  fin <- objs$dbl[is.finite(objs$dbl)]
  stopifnot(identical(as.numeric(sprintf("%.16g", fin)), fin))
  objs
}
