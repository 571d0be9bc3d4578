# R arrays as Arrow Tensor messages, both ways: rdata_to_tensor() against
# pyarrow.ipc.read_tensor() (Arrow C++), tensor_to_rdata() of what
# pyarrow.ipc.write_tensor() writes, the command line, and damaged messages.

tensor_py_code <- '
import numpy as np, pyarrow as pa, pyarrow.ipc as ipc

def read(path, complex=False):
    """The tensor memory-mapped, as R sees it: its type, shape, strides,
    dim names, and its values in R order as bytes (complex: the parts
    interleaved as R holds them)."""
    t = ipc.read_tensor(pa.memory_map(path))
    a = t.to_numpy()
    ordered = np.moveaxis(a, -1, 0) if complex else a
    return dict(type=str(t.type), shape=[int(d) for d in t.shape], strides=[int(s) for s in t.strides],
                names=list(t.dim_names), contiguous=bool(t.is_contiguous),
                # no copy: NumPy s array is over the mapped file
                mapped=not a.flags["OWNDATA"],
                values=np.asarray(ordered).tobytes(order="F").hex())

def read_complex(path):
    t = ipc.read_tensor(pa.memory_map(path))
    z = t.to_numpy().view(np.complex128)[..., 0]
    return [float(v) for v in np.asarray(z).ravel(order="F").real], [float(v) for v in np.asarray(z).ravel(order="F").imag]

def write(path, dtype, shape, order, names=None, big=False):
    n = int(np.prod(shape))
    a = np.arange(n).astype(dtype)
    if big:
        a[0] = np.iinfo(np.int64).max
    a = a.reshape(shape, order=order)
    with pa.OSFile(path, "wb") as f:
        ipc.write_tensor(pa.Tensor.from_numpy(a, dim_names=names), f)

def write_sliced(path):
    a = np.arange(60.0).reshape(6, 10)[::2, 1::3]
    with pa.OSFile(path, "wb") as f:
        ipc.write_tensor(pa.Tensor.from_numpy(a), f)
    return [float(v) for v in a.ravel(order="F")], list(a.shape)

def fixed_shape(path, column):
    """A column of an IPC file as pyarrow sees it: the name of its type, the
    physical shape, permutation and dim names, and the stacked arrays
    (to_numpy_ndarray) in R order as hex, one per row, with NaN (a null)
    positions."""
    t = ipc.open_file(path).read_all()
    col = t.column(column).combine_chunks()
    ty = col.type
    out = dict(type=str(ty), extension=getattr(ty, "extension_name", None))
    if out["extension"] == "arrow.fixed_shape_tensor":
        a = col.to_numpy_ndarray()
        out.update(shape=list(ty.shape), permutation=list(ty.permutation or []), dim_names=list(ty.dim_names or []),
                   stacked=[int(d) for d in a.shape],
                   rows=[np.asarray(a[k], dtype="float64").tobytes(order="F").hex() for k in range(a.shape[0])])
    return out

def write_fixed_shape(path, dtype, shape, perm, names):
    """A table of one tensor column pyarrow makes from a C-order NumPy
    stack (a permutation applied as a transpose of its values)."""
    n = int(np.prod(shape))
    a = np.arange(3 * n).astype(dtype).reshape([3] + list(shape))
    if perm:
        ty = pa.fixed_shape_tensor(pa.from_numpy_dtype(np.dtype(dtype)), shape, permutation=perm, dim_names=names)
        storage = pa.FixedSizeListArray.from_arrays(pa.array(a.ravel()), n)
        arr = pa.ExtensionArray.from_storage(ty, storage)
    else:
        arr = pa.FixedShapeTensorArray.from_numpy_ndarray(a)
        if names:
            ty = pa.fixed_shape_tensor(arr.type.value_type, shape, dim_names=names)
            arr = pa.ExtensionArray.from_storage(ty, arr.storage)
    # the rows as the specification defines them: logical dimension i is
    # physical dimension perm[i] (pyarrow 25 stacks 3-cycles wrongly)
    physical = a
    logical = physical.transpose([0] + [p + 1 for p in perm]) if perm else arr.to_numpy_ndarray()
    if perm and sorted(perm) == list(perm)[::-1] or perm == [1, 0, 2]:
        assert np.array_equal(arr.to_numpy_ndarray(), logical)
    with ipc.new_file(path, pa.schema([("x", arr.type)])) as w:
        w.write_table(pa.table({"x": arr}))
    return [[float(v) for v in np.asarray(logical[k]).ravel(order="F")] for k in range(3)], [int(d) for d in logical.shape[1:]]

def stream(path):
    t = pa.table({"x": [1, 2]})
    with ipc.new_stream(path, t.schema) as w:
        w.write_table(t)
'

tensor_py <- function() {
  skip_if_no_pyarrow()
  if (is.null(arrow_env$tensor)) {
    types <- reticulate::import("types", convert = FALSE)
    builtins <- reticulate::import_builtins(convert = FALSE)
    mod <- types$ModuleType("rdarrow_tensor_helpers")
    builtins$exec(tensor_py_code, mod$`__dict__`)
    arrow_env$tensor <- mod
  }
  arrow_env$tensor
}

py_tensor <- function(path, complex = FALSE) reticulate::py_to_r(tensor_py()$read(path, complex))

# R's bytes of an array's values, as a tensor holds them (little-endian).
r_bytes <- function(x) {
  b <- if (is.raw(x)) {
    as.vector(x)
  } else if (is.logical(x)) {
    writeBin(as.integer(as.vector(x)), raw(), endian = "little")
  } else {
    writeBin(as.vector(unclass(x)), raw(), endian = "little")
  }
  paste(as.character(b), collapse = "")
}

tensor_round_trip <- function(x, dir) {
  src <- file.path(dir, "x.rds")
  saveRDS(x, src)
  t <- file.path(dir, "x.tensor")
  shape <- rdata_to_tensor(src, t)
  out <- file.path(dir, "back.rds")
  tensor_to_rdata(t, out)
  list(tensor = t, shape = shape, back = readRDS(out))
}

test_that("every R array type reaches pyarrow as R holds it, and comes back identical()", {
  tensor_py()
  dir <- local_tempdir()
  na_bits <- c(1.5, NA, NaN, -Inf, Inf, -0, 2^-1074, 6)
  arrays <- list(
    double = array(na_bits, c(2, 4)),
    integer = array(c(1:22, NA, .Machine$integer.max), c(2, 3, 4)),
    logical = matrix(c(TRUE, NA, FALSE, TRUE, FALSE, NA), 3),
    raw = array(as.raw(0:23), c(4, 3, 2)),
    complex = matrix(complex(real = c(1, NA, 3, -0, 5, NaN), imaginary = c(NA, 2, 3, 4, Inf, 6)), 2),
    # integer64's values are bit patterns (NA is INT64_MIN); made without
    # bit64's methods, whether bit64 is loaded or not
    integer64 = structure(readBin(writeBin(c(1L, 0L, 2L, 0L, 0L, NA_integer_, 5L, 7L), raw()), "double", 4),
                          class = "integer64", dim = c(2L, 2L))
  )
  types <- c(double = "double", integer = "int32", logical = "int32", raw = "uint8",
             complex = "double", integer64 = "int64")
  widths <- c(double = 8, integer = 4, logical = 4, raw = 1, complex = 16, integer64 = 8)
  for (nm in names(arrays)) {
    x <- arrays[[nm]]
    r <- tensor_round_trip(x, dir)
    got <- py_tensor(r$tensor, complex = is.complex(x))
    expect_equal(got$type, types[[nm]], info = nm)
    d <- dim(x)
    expect_equal(got$shape, if (nm == "complex") c(d, 2) else d, info = nm)
    # R's column-major strides
    w <- widths[[nm]]
    expect_equal(got$strides, if (nm == "complex") c(w * cumprod(c(1, d))[seq_along(d)], 8) else w * cumprod(c(1, d))[seq_along(d)], info = nm)
    expect_true(got$mapped, info = nm)
    # every element's bits, NA's included
    expect_identical(got$values, r_bytes(x), info = nm)
    expect_identical(r$back, x, info = nm)
    expect_equal(r$shape, got$shape, info = nm)
  }
  # NumPy's complex view over the mapped tensor
  x <- arrays$complex
  saveRDS(x, file.path(dir, "z.rds"))
  rdata_to_tensor(file.path(dir, "z.rds"), file.path(dir, "z.tensor"))
  parts <- reticulate::py_to_r(tensor_py()$read_complex(file.path(dir, "z.tensor")))
  expect_identical(parts[[1]][!is.na(Re(x))], Re(x)[!is.na(Re(x))])
  expect_identical(parts[[2]][!is.na(Im(x))], Im(x)[!is.na(Im(x))])
})

test_that("dimensions from 1 to 5, zero-length ones, dimnames and classes come back identical()", {
  tensor_py()
  dir <- local_tempdir()
  cases <- list(
    one = array(as.double(1:5), 5),
    vector = c(a = 1.5, b = 2.5),
    plain = 1:7,
    two = matrix(1:6, 2, dimnames = list(rows = c("a", "b"), cols = c("x", "y", "z"))),
    three = array(rnorm(24), c(2, 3, 4), dimnames = list(NULL, c("p", "q", "r"), NULL)),
    four = array(1:120, 2:5),
    five = array(rnorm(720), 2:6, dimnames = list(a = NULL, b = NULL, c = NULL, d = NULL, e = NULL)),
    empty_rows = matrix(numeric(0), 0, 3),
    empty_mid = array(integer(0), c(2, 0, 3)),
    table = table(mtcars$cyl, mtcars$gear),
    named_table = table(cyl = mtcars$cyl, gear = mtcars$gear),
    volcano = volcano,
    titanic = Titanic,
    iris3 = iris3,
    # an integer64 whose values fit R's integers stays an integer64
    small64 = structure(readBin(writeBin(c(1L, 0L, 2L, 0L, 3L, 0L, 4L, 0L), raw()), "double", 4),
                        class = "integer64", dim = c(2L, 2L))
  )
  for (nm in names(cases)) {
    x <- cases[[nm]]
    r <- tensor_round_trip(x, dir)
    expect_identical(r$back, x, info = nm)
    got <- py_tensor(r$tensor, complex = is.complex(x))
    expect_equal(got$shape, if (is.null(dim(x))) length(x) else dim(x), info = nm)
    if (!is.null(names(dimnames(x)))) expect_equal(got$names, names(dimnames(x)), info = nm)
    if (length(x)) expect_identical(got$values, r_bytes(x), info = nm)
  }
})

test_that("tensors pyarrow writes, row- or column-major, become the arrays NumPy holds", {
  py <- tensor_py()
  dir <- local_tempdir()
  shape <- c(2L, 3L, 4L)
  n <- prod(shape)
  for (dtype in c("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float32", "float64")) {
    for (order in c("C", "F")) {
      t <- file.path(dir, paste0(dtype, order, ".tensor"))
      py$write(t, dtype, as.list(shape), order, names = list("a", "b", "c"))
      out <- file.path(dir, "out.rds")
      tensor_to_rdata(t, out)
      got <- readRDS(out)
      # NumPy's a[i, j, k] is R's x[i + 1, j + 1, k + 1]
      values <- if (order == "C") aperm(array(0:(n - 1), rev(shape)), 3:1) else array(0:(n - 1), shape)
      int <- dtype %in% c("int8", "int16", "int32", "int64", "uint8", "uint16")
      expected <- if (int) values else array(as.double(values), shape)
      dimnames(expected) <- list(a = NULL, b = NULL, c = NULL)
      expect_identical(got, expected, info = paste(dtype, order))
    }
  }
  # int64 beyond R's integers: bit64's integer64
  t <- file.path(dir, "big.tensor")
  py$write(t, "int64", list(2L, 2L), "F", big = TRUE)
  tensor_to_rdata(t, file.path(dir, "big.rds"))
  got <- readRDS(file.path(dir, "big.rds"))
  expect_s3_class(got, "integer64")
  expect_equal(dim(got), c(2L, 2L))
  bits <- readBin(writeBin(unclass(as.vector(got)), raw()), "integer", 8)
  expect_identical(bits, c(-1L, 2147483647L, 1L, 0L, 2L, 0L, 3L, 0L))
  # a slice NumPy holds with gaps: pyarrow writes its elements
  sl <- reticulate::py_to_r(py$write_sliced(file.path(dir, "sl.tensor")))
  tensor_to_rdata(file.path(dir, "sl.tensor"), file.path(dir, "sl.rds"))
  expect_identical(readRDS(file.path(dir, "sl.rds")), array(sl[[1]], unlist(sl[[2]])))
})

test_that("what R cannot hold is refused, naming why", {
  py <- tensor_py()
  dir <- local_tempdir()
  for (dtype in c("uint64", "float16")) {
    t <- file.path(dir, paste0(dtype, ".tensor"))
    py$write(t, dtype, list(2L, 2L), "C")
    expect_error(tensor_to_rdata(t, file.path(dir, "x.rds")), dtype, class = "rdarrow_error")
    expect_false(file.exists(file.path(dir, "x.rds")))
  }
  # an IPC stream of a table is not a tensor
  s <- file.path(dir, "table.arrows")
  py$stream(s)
  expect_error(tensor_to_rdata(s, file.path(dir, "x.rds")), "holds an Arrow Schema message, not a Tensor", class = "rdarrow_error")
  # ipc_to_rdata() and the command line tell a tensor from a table by its message
  t <- file.path(dir, "int32C.tensor")
  py$write(t, "int32", list(2L, 3L), "C")
  ipc_to_rdata(t, file.path(dir, "via-ipc.rds"))
  expect_identical(readRDS(file.path(dir, "via-ipc.rds")), matrix(0:5, 2, byrow = TRUE))
  # objects that are not arrays
  f <- file.path(dir, "objs.RData")
  df <- data.frame(a = 1:3)
  chr <- matrix(letters[1:4], 2)
  m1 <- matrix(1:4, 2)
  m2 <- matrix(1:6, 3)
  save(df, chr, m1, m2, file = f)
  expect_error(rdata_to_tensor(f, file.path(dir, "t.tensor")), "2 arrays; choose one by name: 'm1', 'm2'", class = "rdarrow_error")
  expect_error(rdata_to_tensor(f, file.path(dir, "t.tensor"), object = "df"), "a data frame has no tensor", class = "rdarrow_error")
  expect_error(rdata_to_tensor(f, file.path(dir, "t.tensor"), object = "chr"), "a character vector has no tensor", class = "rdarrow_error")
  expect_false(file.exists(file.path(dir, "t.tensor")))
  expect_equal(rdata_to_tensor(f, file.path(dir, "t.tensor"), object = "m2"), c(3, 2))
  tensor_to_rdata(file.path(dir, "t.tensor"), file.path(dir, "m2.rds"))
  expect_identical(readRDS(file.path(dir, "m2.rds")), m2)
})

# The offset of the `i`-th occurrence of the 8 little-endian bytes of `v`
# in `bytes`.
find_int64 <- function(bytes, v) {
  pat <- writeBin(c(as.integer(v), 0L), raw(), endian = "little")
  for (i in seq_len(length(bytes) - 7)) if (identical(bytes[i:(i + 7)], pat)) return(i)
  NA_integer_
}

test_that("damaged tensor messages give clear errors and write nothing", {
  dir <- local_tempdir()
  x <- matrix(as.double(1:6), 2)
  saveRDS(x, file.path(dir, "x.rds"))
  t <- file.path(dir, "x.tensor")
  rdata_to_tensor(file.path(dir, "x.rds"), t)
  good <- readBin(t, "raw", file.size(t))
  out <- file.path(dir, "out.rds")
  damaged <- function(bytes, pattern, label) {
    d <- file.path(dir, "d.tensor")
    writeBin(bytes, d)
    expect_error(tensor_to_rdata(d, out), pattern, class = "rdarrow_error", info = label)
    expect_false(file.exists(out))
  }
  # truncated: the body, then the metadata, then the prefix
  damaged(good[seq_len(length(good) - 20)], "truncated", "body")
  damaged(good[1:40], "metadata length \\d+ \\(bytes 4..8\\) does not fit the file's 40 bytes", "metadata")
  damaged(good[1:5], "8-byte prefix|not an Arrow|too short|truncated", "prefix")
  # a metadata length past the end
  b <- good; b[5:8] <- writeBin(100000L, raw(), endian = "little")
  damaged(b, "metadata length 100000", "length")
  # strides (8, 16) for a 2 x 3 double matrix: out of range, negative, misaligned
  at <- find_int64(good, 16)
  expect_false(is.na(at))
  b <- good; b[at:(at + 7)] <- writeBin(c(1000L, 0L), raw(), endian = "little")
  damaged(b, "reach past its 48-byte buffer", "stride out of range")
  b <- good; b[at:(at + 7)] <- writeBin(c(-16L, -1L), raw(), endian = "little")
  damaged(b, "stride -16 of dimension 2 is negative", "negative stride")
  b <- good; b[at:(at + 7)] <- writeBin(c(12L, 0L), raw(), endian = "little")
  damaged(b, "stride 12 of dimension 2 is not a multiple", "misaligned stride")
  # the shape against the buffer: 3 columns made 30
  at3 <- find_int64(good, 3)
  b <- good; b[at3:(at3 + 7)] <- writeBin(c(30L, 0L), raw(), endian = "little")
  damaged(b, "reach past", "shape past the buffer")
  # every single byte of the metadata changed: an error or an array, never a crash
  meta_end <- 8L + readBin(good[5:8], "integer", size = 4, endian = "little")
  set.seed(58)
  for (i in sample(9:meta_end, 120)) {
    b <- good
    b[i] <- as.raw(bitwXor(as.integer(b[i]), sample(1:255, 1)))
    d <- file.path(dir, "fuzz.tensor")
    writeBin(b, d)
    res <- tryCatch({ tensor_to_rdata(d, out); "ok" }, rdarrow_error = function(e) "error")
    expect_true(res %in% c("ok", "error"))
    unlink(out)
  }
})

test_that("the command line writes tensors and reads them back", {
  tensor_py()
  dir <- local_tempdir()
  x <- array(c(1:23, NA), c(2, 3, 4), dimnames = list(a = NULL, b = NULL, c = letters[1:4]))
  saveRDS(x, file.path(dir, "x.rds"))
  r <- run_cli(c("to-tensor", file.path(dir, "x.rds")))
  expect_equal(r$status, 0L, info = paste(r$stderr, collapse = "\n"))
  got <- py_tensor(file.path(dir, "x.tensor"))
  expect_equal(got$shape, c(2, 3, 4))
  expect_equal(got$names, c("a", "b", "c"))
  expect_identical(got$values, r_bytes(x))
  r <- run_cli(c("to-rdata", file.path(dir, "x.tensor"), "-o", file.path(dir, "back.rds")))
  expect_equal(r$status, 0L, info = paste(r$stderr, collapse = "\n"))
  expect_identical(readRDS(file.path(dir, "back.rds")), x)
  df <- data.frame(a = 1)
  save(df, file = file.path(dir, "df.RData"))
  r <- run_cli(c("to-tensor", file.path(dir, "df.RData"), "-o", file.path(dir, "df.tensor")))
  expect_equal(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "holds no array")
})

test_that("an array over 2 GiB (a long vector) goes to a tensor and back", {
  skip_on_cran()
  py <- tensor_py()
  dir <- local_tempdir()
  n <- 2^31 + 2
  x <- raw(n)
  x[c(1, 2^31, n)] <- as.raw(c(7, 8, 9))
  dim(x) <- c(2L, n / 2)
  src <- file.path(dir, "big.rds")
  saveRDS(x, src, compress = FALSE)
  t <- file.path(dir, "big.tensor")
  expect_equal(rdata_to_tensor(src, t), c(2, n / 2))
  unlink(src)
  info <- reticulate::py_to_r(reticulate::py_run_string(sprintf('
import pyarrow as pa, pyarrow.ipc as ipc
t = ipc.read_tensor(pa.memory_map("%s"))
a = t.to_numpy()
big = dict(shape=[int(d) for d in t.shape], strides=[int(s) for s in t.strides],
           first=int(a[0, 0]), mid=int(a[1, 2**30 - 1]), last=int(a[1, -1]), nonzero=int((a[:, :1000] != 0).sum()))
', t), convert = FALSE)$big)
  expect_equal(info$shape, c(2, n / 2))
  expect_equal(info$strides, c(1, 2))
  expect_equal(c(info$first, info$mid, info$last, info$nonzero), c(7, 8, 9, 1))
  out <- file.path(dir, "back.rds")
  tensor_to_rdata(t, out, compress = "none")
  unlink(t)
  back <- readRDS(out)
  expect_identical(back, x)
})

# R's values of each element as the float64 bytes pyarrow's stack gives.
r_rows <- function(l) vapply(l, function(x) {
  paste(as.character(writeBin(as.double(as.vector(x)), raw(), endian = "little")), collapse = "")
}, "")

test_that("a list of equal-shape arrays is an arrow.fixed_shape_tensor column pyarrow stacks, and comes back identical()", {
  py <- tensor_py()
  dir <- local_tempdir()
  set.seed(58)
  cases <- list(
    doubles = replicate(4, matrix(rnorm(6), 2, 3), simplify = FALSE),
    integers = lapply(1:3, function(i) array(i * 1:24, c(2, 3, 4))),
    one_dim = lapply(1:3, function(i) array(as.double(i + 0:4), 5)),
    five_dims = lapply(1:2, function(i) array(as.double(i * 1:720), 2:6)),
    named_dims = lapply(1:3, function(i) array(i * 1:24, c(2, 3, 4), dimnames = list(a = NULL, b = NULL, c = letters[1:4]))),
    zero_length = lapply(1:3, function(i) matrix(numeric(0), 0, 3)),
    with_na = list(matrix(c(1, NA, 3, 4), 2), matrix(c(NA_real_, 2, NaN, 4), 2)),
    int_na = list(matrix(c(1L, NA, 3L, 4L), 2), matrix(5:8, 2)),
    covariances = lapply(1:50, function(i) cov(matrix(rnorm(30), 10)))
  )
  for (nm in names(cases)) {
    l <- cases[[nm]]
    df <- data.frame(id = seq_along(l))
    df$x <- l
    f <- file.path(dir, "df.rds")
    saveRDS(df, f)
    ipc <- file.path(dir, "df.arrow")
    rdata_to_ipc(f, ipc)
    got <- reticulate::py_to_r(py$fixed_shape(ipc, "x"))
    expect_equal(got$extension, "arrow.fixed_shape_tensor", info = nm)
    d <- dim(l[[1]])
    expect_equal(got$shape, rev(d), info = nm)
    if (length(d) > 1) expect_equal(got$permutation, rev(seq_along(d)) - 1, info = nm)
    expect_equal(got$stacked, c(length(l), d), info = nm)
    if (!is.null(names(dimnames(l[[1]])))) expect_equal(got$dim_names, rev(names(dimnames(l[[1]]))), info = nm)
    # every element's values, as R holds them (an NA is NaN in NumPy)
    if (!nm %in% c("with_na", "int_na") && prod(d) > 0) expect_identical(got$rows, r_rows(l), info = nm)
    # back through IPC (file and stream), Parquet and the C stream
    back <- file.path(dir, "back.rds")
    ipc_to_rdata(ipc, back)
    expect_identical(readRDS(back), df, info = paste(nm, "ipc"))
    rdata_to_ipc(f, ipc, format = "stream")
    ipc_to_rdata(ipc, back)
    expect_identical(readRDS(back), df, info = paste(nm, "ipc stream"))
    pq <- file.path(dir, "df.parquet")
    rdata_to_parquet(f, pq)
    parquet_to_rdata(pq, back)
    expect_identical(readRDS(back), df, info = paste(nm, "parquet"))
    expect_identical(as.data.frame(rdata_to_arrow(f)), df, info = paste(nm, "C stream"))
    # a list object itself
    saveRDS(l, f)
    rdata_to_ipc(f, ipc)
    ipc_to_rdata(ipc, back)
    expect_identical(readRDS(back), l, info = paste(nm, "list"))
  }
  # NA: a null in Arrow; R's NaN stays NaN
  l <- cases$with_na
  saveRDS(l, file.path(dir, "na.rds"))
  rdata_to_ipc(file.path(dir, "na.rds"), ipc)
  got <- reticulate::py_to_r(py$fixed_shape(ipc, 0L))
  expect_equal(got$stacked, c(2, 2, 2))
  stacked <- c(l[[1]], l[[2]])
  bits <- unlist(lapply(got$rows, function(h) readBin(as.raw(strtoi(substring(h, seq(1, nchar(h), 2), seq(2, nchar(h), 2)), 16L)), "double", 4)))
  # (under Arrow's nulls, R's own NA bits: NumPy's stack holds R's values)
  expect_identical(bits, stacked)
})

test_that("lists of other shapes, types or attributes stay lists", {
  py <- tensor_py()
  dir <- local_tempdir()
  cases <- list(
    shapes = list(matrix(1, 2, 2), matrix(1, 2, 3)),
    types = list(matrix(1L, 2, 2), matrix(1, 2, 2)),
    plain_vectors = list(1:3, 4:6),
    a_null = list(matrix(1, 2, 2), NULL),
    classed = list(structure(matrix(1, 2, 2), class = "foo"), structure(matrix(2, 2, 2), class = "foo")),
    logical = list(matrix(TRUE, 2, 2), matrix(FALSE, 2, 2)),
    other_names = list(matrix(1, 2, 2, dimnames = list(a = NULL, b = NULL)), matrix(1, 2, 2, dimnames = list(x = NULL, b = NULL)))
  )
  for (nm in names(cases)) {
    l <- cases[[nm]]
    f <- file.path(dir, "l.rds")
    saveRDS(l, f)
    ipc <- file.path(dir, "l.arrow")
    rdata_to_ipc(f, ipc)
    got <- reticulate::py_to_r(py$fixed_shape(ipc, 0L))
    expect_null(got$extension, info = nm)
    back <- file.path(dir, "back.rds")
    ipc_to_rdata(ipc, back)
    expect_identical(readRDS(back), l, info = nm)
  }
})

test_that("tensor columns pyarrow writes, with or without a permutation, become R arrays as NumPy stacks them", {
  py <- tensor_py()
  dir <- local_tempdir()
  for (case in list(
    list(dtype = "float64", shape = list(2L, 3L), perm = NULL, names = NULL),
    list(dtype = "int32", shape = list(2L, 3L, 4L), perm = NULL, names = list("x", "y", "z")),
    list(dtype = "int16", shape = list(2L, 3L, 4L), perm = list(1L, 2L, 0L), names = list("x", "y", "z")),
    list(dtype = "float64", shape = list(2L, 3L, 4L), perm = list(1L, 0L, 2L), names = NULL),
    list(dtype = "float32", shape = list(4L), perm = NULL, names = NULL)
  )) {
    ipc <- file.path(dir, "py.arrow")
    want <- reticulate::py_to_r(py$write_fixed_shape(ipc, case$dtype, case$shape, case$perm, case$names))
    out <- file.path(dir, "py.rds")
    ipc_to_rdata(ipc, out)
    got <- readRDS(out)$x
    label <- paste(case$dtype, length(case$shape))
    expect_length(got, 3L)
    logical <- unlist(want[[2]])
    for (k in 1:3) {
      expect_equal(dim(got[[k]]), logical, info = label)
      expect_equal(as.double(got[[k]]), want[[1]][[k]], info = label)
      if (!is.null(case$names)) {
        nms <- unlist(case$names)
        if (!is.null(case$perm)) nms <- nms[unlist(case$perm) + 1]
        expect_equal(names(dimnames(got[[k]])), nms, info = label)
      }
    }
    expect_identical(typeof(got[[1]]), if (case$dtype %in% c("int32", "int16")) "integer" else "double")
  }
})

test_that("arrow R reads a tensor column as the list it was", {
  skip_if_not_installed("arrow")
  dir <- local_tempdir()
  l <- lapply(1:3, function(i) matrix(i * 1:6, 2))
  df <- data.frame(id = 1:3)
  df$m <- l
  f <- file.path(dir, "df.rds")
  saveRDS(df, f)
  tab <- arrow::as_arrow_table(rdata_to_arrow(f))
  expect_true(grepl("fixed_size_list", tab$schema$m$type$ToString()))
  expect_identical(as.data.frame(tab), df)
  expect_identical(as.data.frame(arrow::as_record_batch_reader(rdata_to_arrow(f))$read_table()), df)
})
