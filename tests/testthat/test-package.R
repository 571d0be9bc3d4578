test_that("the compiled engine is loaded and reports its version", {
  v <- rdarrow_engine_version()
  expect_type(v, "character")
  expect_length(v, 1L)
  expect_true(nzchar(v))
  expect_match(v, "^[0-9]+\\.[0-9]+\\.[0-9]+")
})
