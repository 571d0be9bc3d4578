# The engine's single table of node codes (rdarrow:::sxp_codes()) and its
# flags packing (rdarrow:::pack_flags()) against what R itself writes:
# R's header Rinternals.h for the SEXP types, and serialize() of a value of
# each kind for everything, the pseudo codes of serialize.c (not installed
# with R) included.

# Every code, named as Rinternals.h and serialize.c name them.
r_node_names <- c(
  "NILSXP", "SYMSXP", "LISTSXP", "CLOSXP", "ENVSXP", "PROMSXP", "LANGSXP",
  "SPECIALSXP", "BUILTINSXP", "CHARSXP", "LGLSXP", "INTSXP", "REALSXP",
  "CPLXSXP", "STRSXP", "DOTSXP", "VECSXP", "EXPRSXP", "BCODESXP", "EXTPTRSXP",
  "WEAKREFSXP", "RAWSXP", "S4SXP", "REFSXP", "NILVALUE_SXP", "GLOBALENV_SXP",
  "UNBOUNDVALUE_SXP", "MISSINGARG_SXP", "BASENAMESPACE_SXP", "NAMESPACESXP",
  "PACKAGESXP", "PERSISTSXP", "CLASSREFSXP", "GENERICREFSXP", "BCREPDEF",
  "BCREPREF", "EMPTYENV_SXP", "BASEENV_SXP", "ATTRLANGSXP", "ATTRLISTSXP",
  "ALTREP_SXP"
)

# The big-endian 4-byte word at byte offset `at` (0-based) after the
# header of an XDR serialize() stream; `at = 0` is the first item's flags.
# The version 3 header is "X\n", three ints (version, writer version,
# minimal reader version), an int n and n bytes of native encoding name.
word_after_header <- function(stream, at = 0L) {
  int_at <- function(pos) readBin(stream[pos + 1:4], "integer", endian = "big")
  stopifnot(identical(stream[1:2], charToRaw("X\n")))
  version <- int_at(2L)
  header <- if (version == 3L) 18L + int_at(14L) else 14L
  int_at(header + at)
}

# The flags word of the first item R writes for `x` (or the word `at`
# bytes after it). serialize() of a package environment warns that it "may
# not be available when loading": expected here.
r_first_word <- function(x, version = 3L, at = 0L, ...) {
  s <- withCallingHandlers(
    serialize(x, NULL, version = version, xdr = TRUE, ...),
    warning = function(w) {
      if (grepl("may not be available when loading", conditionMessage(w))) {
        invokeRestart("muffleWarning")
      }
    }
  )
  word_after_header(s, at)
}

test_that("sxp_codes() names every node code once", {
  codes <- rdarrow:::sxp_codes()
  expect_type(codes, "integer")
  expect_false(is.null(names(codes)))
  missing <- setdiff(r_node_names, names(codes))
  expect(length(missing) == 0L,
         sprintf("sxp_codes() lacks %s", paste(missing, collapse = ", ")))
  expect_false(anyDuplicated(names(codes)) > 0L, label = "duplicated names in sxp_codes()")
  dup <- codes[duplicated(codes) | duplicated(codes, fromLast = TRUE)]
  expect(length(dup) == 0L,
         sprintf("sxp_codes() gives the same code to several names: %s",
                 paste(names(dup), dup, sep = " = ", collapse = ", ")))
  expect_false(anyNA(codes))
  # a code is the low byte of a flags word
  expect_true(all(codes >= 0L & codes <= 255L))
})

test_that("sxp_codes() gives the SEXP types R's Rinternals.h defines", {
  header <- file.path(R.home("include"), "Rinternals.h")
  if (!file.exists(header)) {
    skip(sprintf("R's C headers are not installed (%s is missing; Debian: r-base-dev)", header))
  }
  lines <- readLines(header, warn = FALSE)
  m <- regmatches(lines, regexec("^#define[ \t]+([A-Z0-9_]+SXP)[ \t]+([0-9]+)\\b", lines))
  m <- m[lengths(m) == 3L]
  defined <- stats::setNames(as.integer(vapply(m, `[[`, "", 3L)), vapply(m, `[[`, "", 2L))
  # NILSXP .. S4SXP, less the ones R never writes (ANYSXP, NEWSXP, FREESXP,
  # FUNSXP are not in r_node_names)
  common <- intersect(r_node_names, names(defined))
  expect_gte(length(common), 23L)
  codes <- rdarrow:::sxp_codes()
  for (nm in common) {
    expect_identical(codes[[nm]], defined[[nm]], label = sprintf("sxp_codes()[[\"%s\"]]", nm),
                     expected.label = sprintf("Rinternals.h's %s", nm))
  }
})

test_that("sxp_codes() gives the codes serialize() writes for every kind of value", {
  codes <- rdarrow:::sxp_codes()
  # An environment with no bindings, unhashed, enclosed by the empty one:
  # serialize() writes ENVSXP's flags, a locked int, then ENCLOS, FRAME,
  # HASHTAB and ATTRIB as one word each (EMPTYENV_SXP, then NILVALUE_SXP
  # three times): 24 bytes.
  bare_env <- new.env(hash = FALSE, parent = emptyenv())
  # An unhashed environment whose one binding `p` is a promise: after
  # ENVSXP's flags, the locked int and ENCLOS (12 bytes) comes the frame's
  # LISTSXP flags, its tag (SYMSXP flags, CHARSXP flags, length, "p": 13
  # bytes), then the promise: at byte 29.
  promise_env <- new.env(hash = FALSE, parent = emptyenv())
  delayedAssign("p", 1 + 1, eval.env = globalenv(), assign.env = promise_env)
  # A function's frame holding `...` (a DOTSXP), the function made in the
  # global environment so that ENCLOS is one word: the same layout with
  # the 3-byte tag "...", so at byte 31.
  dots_env <- eval(quote((function(...) environment())(1, 2)), globalenv())
  holder <- new.env(parent = globalenv())
  holder$a <- 1
  where <- new.env()
  tiny <- methods::setClass("RdarrowTinyNode", representation(x = "numeric"), where = where)
  cases <- list(
    list("NULL", NULL, "NILVALUE_SXP"),
    list("symbol", quote(x), "SYMSXP"),
    list("pairlist", pairlist(a = 1), "LISTSXP"),
    list("closure", make_closure("function(x) x + 1"), "CLOSXP"),
    list("environment", holder, "ENVSXP"),
    list("promise in a frame", promise_env, "PROMSXP", at = 29L),
    list("call", quote(f(x, 1)), "LANGSXP"),
    list("special", `if`, "SPECIALSXP"),
    list("builtin", sum, "BUILTINSXP"),
    list("CHARSXP of a character vector", "abc", "CHARSXP", at = 8L),
    list("logical", c(TRUE, NA), "LGLSXP"),
    list("integer", c(1L, NA), "INTSXP"),
    list("double", c(1.5, NA), "REALSXP"),
    list("complex", 1i, "CPLXSXP"),
    list("character", c("a", NA), "STRSXP"),
    list("... in a frame", dots_env, "DOTSXP", at = 31L),
    list("list", list(1, "a"), "VECSXP"),
    list("expression", expression(a + 1), "EXPRSXP"),
    list("byte code", compiler::compile(quote(x + 1)), "BCODESXP"),
    list("external pointer", methods::new("externalptr"), "EXTPTRSXP"),
    list("raw", as.raw(1:3), "RAWSXP"),
    list("S4 object", tiny(x = 1), "S4SXP"),
    list("the same environment twice", list(bare_env, bare_env), "REFSXP", at = 32L),
    list("globalenv()", globalenv(), "GLOBALENV_SXP"),
    list("missing argument in a list", list(quote(expr = )), "MISSINGARG_SXP", at = 8L),
    list(".BaseNamespaceEnv", .BaseNamespaceEnv, "BASENAMESPACE_SXP"),
    list("asNamespace(\"stats\")", asNamespace("stats"), "NAMESPACESXP"),
    list("package:stats", as.environment("package:stats"), "PACKAGESXP"),
    list("emptyenv()", emptyenv(), "EMPTYENV_SXP"),
    list("baseenv()", baseenv(), "BASEENV_SXP"),
    list("compact sequence 1:10", 1:10, "ALTREP_SXP")
  )
  if (requireNamespace("rlang", quietly = TRUE)) {
    cases[[length(cases) + 1L]] <- list("weak reference", rlang::new_weakref(holder, 1), "WEAKREFSXP")
  }
  for (case in cases) {
    word <- r_first_word(case[[2]], at = if (is.null(case$at)) 0L else case$at)
    expect_identical(bitwAnd(word, 255L), codes[[case[[3]]]],
                     label = sprintf("code R writes for %s", case[[1]]),
                     expected.label = sprintf("sxp_codes()[[\"%s\"]]", case[[3]]))
  }
  # A persistent name: serialize() with a refhook that names the
  # environment writes PERSISTSXP.
  word <- r_first_word(holder, refhook = function(e) "a name")
  expect_identical(bitwAnd(word, 255L), codes[["PERSISTSXP"]],
                   label = "code R writes for a persistent name")
  # A reference is its index (1: the first environment written) above the
  # REFSXP code.
  expect_identical(r_first_word(list(bare_env, bare_env), at = 32L),
                   bitwOr(bitwShiftL(1L, 8L), codes[["REFSXP"]]))
  if (!requireNamespace("rlang", quietly = TRUE)) {
    skip("rlang is not installed: no weak reference to serialize (base R cannot make one)")
  }
})

test_that("pack_flags() packs the flags words R writes", {
  codes <- rdarrow:::sxp_codes()
  pack <- function(name, ...) rdarrow:::pack_flags(codes[[name]], ...)
  # Plain vectors and lists: no levels; attributes and the object bit as R
  # sets them.
  vectors <- list(
    LGLSXP = c(TRUE, NA), INTSXP = c(1L, NA), REALSXP = c(1.5, NA), CPLXSXP = 1i,
    STRSXP = c("a", NA), VECSXP = list(1, "a"), RAWSXP = as.raw(1:3),
    EXPRSXP = expression(a + 1)
  )
  for (nm in names(vectors)) {
    x <- vectors[[nm]]
    expect_identical(pack(nm), r_first_word(x), label = sprintf("pack_flags(%s)", nm),
                     expected.label = "R's flags word")
    # with a names attribute (attr bit, no object bit)
    named <- stats::setNames(x, paste0("n", seq_along(x)))
    expect_identical(pack(nm, attr = TRUE), r_first_word(named),
                     label = sprintf("pack_flags(%s, attr = TRUE)", nm),
                     expected.label = "R's flags word")
  }
  # A factor: an integer vector with attributes and the object bit.
  f <- factor(c("b", "a", NA))
  expect_identical(pack("INTSXP", object = TRUE, attr = TRUE), r_first_word(f),
                   expected.label = "R's flags word for a factor")
  # A data frame: a list with attributes and the object bit.
  expect_identical(pack("VECSXP", object = TRUE, attr = TRUE),
                   r_first_word(data.frame(a = 1)),
                   expected.label = "R's flags word for a data frame")
  # A pairlist cell with a tag.
  expect_identical(pack("LISTSXP", tag = TRUE), r_first_word(pairlist(a = 1)),
                   expected.label = "R's flags word for pairlist(a = 1)")
  # CHARSXPs carry their encoding in the levels: R's Defn.h has
  # BYTES_MASK 1 << 1, LATIN1_MASK 1 << 2, UTF8_MASK 1 << 3, ASCII_MASK
  # 1 << 6 (the element's flags word follows the STRSXP's flags and length).
  latin1 <- "caf\xe9"
  Encoding(latin1) <- "latin1"
  bytes <- "\xff"
  Encoding(bytes) <- "bytes"
  strings <- list(ascii = list("abc", 64L), latin1 = list(latin1, 4L),
                  utf8 = list(enc2utf8("\u00e9"), 8L), bytes = list(bytes, 2L))
  for (nm in names(strings)) {
    s <- strings[[nm]]
    expect_identical(pack("CHARSXP", levels = s[[2]]), r_first_word(s[[1]], at = 8L),
                     label = sprintf("pack_flags(CHARSXP, levels = %d) (%s)", s[[2]], nm),
                     expected.label = "R's flags word")
  }
})
