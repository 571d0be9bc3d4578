test_that("the compiled engine is loaded and reports its version", {
  v <- rdarrow_engine_version()
  expect_type(v, "character")
  expect_length(v, 1L)
  expect_true(nzchar(v))
  expect_match(v, "^[0-9]+\\.[0-9]+\\.[0-9]+")
})

test_that("the shared library exports only R's entry point, its routines registered", {
  dll <- getLoadedDLLs()[["rdarrow"]]
  expect_false(is.null(dll))
  routines <- getDLLRegisteredRoutines(dll)$.Call
  expect_gt(length(routines), 10L)
  # the Rust library's own symbols stay inside (linked with
  # --exclude-libs and --gc-sections where the linker takes them, so that
  # what R never calls is left out): R_init_rdarrow is all R looks up
  path <- dll[["path"]]
  nm <- Sys.which("nm")
  if (!nzchar(nm) || Sys.info()[["sysname"]] != "Linux") {
    skip("nm on Linux lists a shared library's exports")
  }
  exported <- system2(nm, c("-D", "--defined-only", shQuote(path)), stdout = TRUE)
  exported <- sub("^.* ", "", exported)
  expect_true("R_init_rdarrow" %in% exported)
  expect_lt(length(exported), 10L)
  expect_lt(file.size(path) / 2^20, 30)
})
