# Seeds of the qs_formats and qs_encoding fuzz targets, made by the real qs
# and qs2 (RDARROW_QS_LIB, or the repository's .qs-lib from tools/setup.sh):
#   Rscript make_qs_seeds.R SEEDS_DIR
# qs_formats: .qs files of every preset and algorithm (checksum on and off),
#   .qs2 files at levels 1 and 3, shuffled and not, .qdata files;
# qs_encoding: the decompressed streams of .qs files (qs's "uncompressed"
#   algorithm, the header dropped), after one byte of their shuffle bits.
args <- commandArgs(TRUE)
seeds <- args[[1]]
lib <- Sys.getenv("RDARROW_QS_LIB")
if (!nzchar(lib)) stop("set RDARROW_QS_LIB to the library of qs and qs2 (tools/setup.sh builds .qs-lib)")
.libPaths(c(lib, .libPaths()))
for (d in c("qs_formats", "qs_encoding")) dir.create(file.path(seeds, d), recursive = TRUE, showWarnings = FALSE)
setClass("P", representation(x = "numeric"))
e <- new.env()
e$v <- 1:3
objects <- list(
  frame = data.frame(i = c(1L, NA), d = c(0.5, NA), s = c("a", NA), f = factor(c("u", NA))),
  atoms = list(TRUE, NA, 1L, 2.5, 1i, as.raw(7), "x", NA_character_, NULL),
  strings = c("caf\u00e9", enc2native("plain"), NA),
  nested = list(a = list(b = list(c = 1:3)), m = matrix(1:4, 2)),
  times = list(as.Date("2024-01-01"), as.POSIXct("2024-01-01 10:00:00", tz = "UTC")),
  env = list(e, e),
  s4 = new("P", x = 1:2 + 0.5),
  code = list(f = function(x, y = 2) x + y, g = y ~ x, q = quote(f(a, b = 1)), miss = formals(function(a) NULL))
)
k <- 0
for (n in names(objects)) {
  x <- objects[[n]]
  for (s in list(list(preset = "fast"), list(preset = "high"), list(preset = "archive"),
                 list(preset = "uncompressed"), list(preset = "custom", algorithm = "lz4hc", compress_level = 4L),
                 list(preset = "high", check_hash = FALSE))) {
    k <- k + 1
    do.call(qs::qsave, c(list(x, file.path(seeds, "qs_formats", sprintf("%s_%02d.qs", n, k))), s))
  }
  for (shuffle in c(0L, 15L)) {
    f <- tempfile(fileext = ".qs")
    qs::qsave(x, f, preset = "custom", algorithm = "uncompressed", shuffle_control = shuffle, check_hash = FALSE)
    b <- readBin(f, "raw", file.size(f))
    writeBin(c(as.raw(shuffle), b[21:length(b)]), file.path(seeds, "qs_encoding", sprintf("%s_%d", n, shuffle)))
  }
  for (level in c(1L, 3L)) for (shuffle in c(TRUE, FALSE)) {
    qs2::qs_save(x, file.path(seeds, "qs_formats", sprintf("%s_%d_%d.qs2", n, level, shuffle)),
                 compress_level = level, shuffle = shuffle)
  }
  if (!n %in% c("env", "s4", "code")) {
    qs2::qd_save(x, file.path(seeds, "qs_formats", sprintf("%s.qdata", n)))
  }
}
