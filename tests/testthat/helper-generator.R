# A fixed-seed generator of R values for the differential test of the
# union and struct layouts (test-union-differential.R): random nested lists
# of every atomic type with NA, classed vectors (factor, Date, POSIXct,
# difftime, integer64), attributes, names full and partial, S4 objects of
# data and data frames of every column kind, nested to depth 4.
# gen_object(seed) makes one value; the same seed gives the same value on
# every machine (R's default RNG, set here).

# S4 classes of data the generator draws from (defined once per session,
# in the global environment, so that saveRDS()/readRDS() find them).
gen_classes <- function() {
  where <- globalenv()
  if (!methods::isClass("genPoint", where = where)) {
    methods::setClass("genPoint", representation(x = "numeric", label = "character"),
                      where = where)
  }
  if (!methods::isClass("genBag", where = where)) {
    methods::setClass("genBag", representation(items = "list", n = "integer", flag = "logical"),
                      where = where)
  }
  if (!methods::isClass("genCount", where = where)) {
    methods::setClass("genCount", contains = "integer", representation(note = "character"),
                      where = where)
  }
  invisible(TRUE)
}

# One value from `seed`.
gen_object <- function(seed, depth = 4L) {
  gen_classes()
  old <- if (exists(".Random.seed", globalenv(), inherits = FALSE)) get(".Random.seed", globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else assign(".Random.seed", old, globalenv()))
  RNGkind("Mersenne-Twister", "Inversion", "Rejection")
  set.seed(seed)
  gen_list(depth)
}

gen_atomic_kinds <- c("logical", "integer", "double", "complex", "character", "raw",
                      "factor", "ordered", "Date", "Date_int", "POSIXct", "POSIXct_notz",
                      "difftime", "integer64", "hms", "POSIXlt", "array", "null", "matrix")

# An atomic (or classed atomic) vector of kind `kind`.
gen_atomic <- function(kind = sample(gen_atomic_kinds, 1L)) {
  n <- sample(c(0L, 1L, 1L, 2L, 3L, 5L), 1L)
  na <- function(x) {
    if (length(x) && stats::runif(1) < 0.4) x[sample.int(length(x), 1L)] <- NA
    x
  }
  x <- switch(kind,
    logical = na(sample(c(TRUE, FALSE), n, TRUE)),
    integer = na(sample(c(-5L:5L, .Machine$integer.max, -.Machine$integer.max), n, TRUE)),
    double = {
      x <- na(sample(c(-1.5, 0, -0, 2.25, 1e300, Inf, -Inf, NaN, pi), n, TRUE))
      # R's arithmetic on NA: a NaN with NA's payload, other bits than NA_real_'s
      if (n && stats::runif(1) < 0.3) x[[sample.int(n, 1L)]] <- NA_real_ * 2
      x
    },
    complex = na(complex(real = sample(c(1, -0.5, NaN, 0), n, TRUE), imaginary = sample(c(0, 2, -Inf), n, TRUE))),
    character = {
      x <- na(sample(c("a", "", "NA", "caf\u00e9", "\u65e5\u672c", "longer than twelve bytes"), n, TRUE))
      if (n && stats::runif(1) < 0.2) x[[1L]] <- iconv("caf\u00e9", "UTF-8", "latin1")
      if (n && stats::runif(1) < 0.1) x[[n]] <- "\xff\xfe"
      x
    },
    raw = as.raw(sample(0:255, n, TRUE)),
    factor = na(factor(sample(c("b", "a", "c"), n, TRUE), levels = c("b", "a", "c", "unused"))),
    ordered = na(factor(sample(c("lo", "hi"), n, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE)),
    Date = na(as.Date("2020-02-29") + sample(c(-40000, 0, 1, 365.5, NA), n, TRUE)),
    Date_int = structure(na(sample(c(-1L, 0L, 18000L), n, TRUE)), class = "Date"),
    POSIXct = na(.POSIXct(1.6e9 + sample(c(0, 0.5, -3e9, 86400), n, TRUE),
                          tz = sample(c("UTC", "America/New_York", ""), 1L))),
    POSIXct_notz = structure(na(1.6e9 + sample(c(0, 1, 7.25), n, TRUE)), class = c("POSIXct", "POSIXt")),
    difftime = as.difftime(na(sample(c(1, 2.5, -3), n, TRUE)),
                           units = sample(c("secs", "mins", "hours", "days", "weeks"), 1L)),
    integer64 = if (requireNamespace("bit64", quietly = TRUE)) {
      na(bit64::as.integer64(sample(c("1", "-9007199254740993", "9223372036854775807"), n, TRUE)))
    } else na(sample(1:3, n, TRUE)),
    hms = if (requireNamespace("hms", quietly = TRUE)) {
      hms::hms(seconds = na(sample(c(0, 3600.5, 86399), n, TRUE)))
    } else na(sample(c(0, 1.5), n, TRUE)),
    POSIXlt = as.POSIXlt(na(.POSIXct(1.6e9 + sample(c(0, 0.25, -4e9), n, TRUE), tz = "UTC"))),
    array = array(na(sample(c(1L, -2L, 0L), 2L * n, TRUE)), c(1L, 2L, n)),
    null = NULL,
    matrix = {
      nr <- sample(1:3, 1L)
      m <- matrix(na(sample(c(1.5, -2, 0), nr * 2L, TRUE)), nr, 2L)
      if (stats::runif(1) < 0.4) colnames(m) <- c("u", "v")
      m
    }
  )
  if (!is.null(x) && !kind %in% c("matrix", "array", "POSIXlt")) {
    r <- stats::runif(1)
    if (r < 0.15 && length(x)) {
      names(x) <- sample(letters, length(x), TRUE)
    } else if (r < 0.22 && length(x)) {
      names(x) <- ifelse(stats::runif(length(x)) < 0.5, "", sample(letters, length(x), TRUE))
    }
    if (stats::runif(1) < 0.1) attr(x, "note") <- sample(c("kept", "an attribute"), 1L)
  }
  x
}

# A data frame with columns of kinds drawn from every column kind (list
# columns among them), 0 to 3 rows; row names automatic, characters or
# none at all.
gen_frame <- function(depth) {
  nr <- sample(0:3, 1L)
  nc <- sample(0:3, 1L)
  cols <- list()
  for (j in seq_len(nc)) {
    kind <- sample(c(setdiff(gen_atomic_kinds, c("null", "matrix", "array")), "list"), 1L)
    col <- NULL
    tries <- 0L
    while (length(col) != nr && tries < 20L) {
      col <- if (kind == "list") {
        lapply(seq_len(nr), function(i) gen_value(max(depth - 1L, 0L)))
      } else {
        v <- gen_atomic(kind)
        if (length(v) >= nr) v[seq_len(nr)] else NULL
      }
      tries <- tries + 1L
    }
    if (length(col) != nr) next
    if (!is.list(col)) names(col) <- NULL
    cols[[paste0("c", j)]] <- col
  }
  df <- structure(cols, names = names(cols) %||% character(), class = "data.frame",
                  row.names = .set_row_names(nr))
  if (nr && stats::runif(1) < 0.25) attr(df, "row.names") <- paste0("r", seq_len(nr))
  r <- stats::runif(1)
  if (r < 0.08 && requireNamespace("data.table", quietly = TRUE)) {
    df <- data.table::as.data.table(df)
  } else if (r < 0.16 && requireNamespace("tibble", quietly = TRUE)) {
    df <- tibble::as_tibble(df)
  } else if (r < 0.2 && !length(cols)) {
    attr(df, "names") <- NULL
  }
  if (stats::runif(1) < 0.1) attr(df, "note") <- "frame"
  df
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# An S4 object of data.
gen_s4 <- function(depth) {
  switch(sample(3L, 1L),
    methods::new("genPoint", x = gen_atomic("double"), label = gen_atomic("character")),
    methods::new("genBag", items = unclass(gen_list(max(depth - 1L, 0L))), n = gen_atomic("integer"),
                 flag = gen_atomic("logical")),
    methods::new("genCount", gen_atomic("integer"), note = "n")
  )
}

# Any value: mostly atomic, else a list, frame or S4 object while depth lasts.
gen_value <- function(depth) {
  r <- stats::runif(1)
  if (depth <= 0L || r < 0.55) return(gen_atomic())
  if (r < 0.8) return(gen_list(depth - 1L))
  if (r < 0.92) return(gen_frame(depth - 1L))
  gen_s4(depth - 1L)
}

# A list of 0 to 5 values, names full, partial or none.
gen_list <- function(depth) {
  n <- sample(0:5, 1L)
  x <- lapply(seq_len(n), function(i) gen_value(depth))
  r <- stats::runif(1)
  if (n && r < 0.4) {
    names(x) <- make.unique(sample(letters, n, TRUE))
  } else if (n && r < 0.55) {
    names(x) <- ifelse(stats::runif(n) < 0.5, "", sample(letters, n, TRUE))
  }
  if (stats::runif(1) < 0.08) attr(x, "note") <- "list"
  if (stats::runif(1) < 0.05) class(x) <- "myList"
  x
}
