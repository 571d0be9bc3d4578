# The docs where users look: the pkgdown site builds offline without a
# warning, with every export in its reference index (pkgdown refuses a
# topic left out); the README stays short; the R <-> Arrow type mapping is
# written in one place, the getting-started vignette. Needs the source
# tree (skipped when the tests run from an installed package).

docs_root <- function() {
  root <- normalizePath(file.path(testthat::test_path(), "..", ".."), mustWork = FALSE)
  skip_if_not(file.exists(file.path(root, "_pkgdown.yml")) && file.exists(file.path(root, "DESCRIPTION")),
              "the package source tree is not here")
  root
}

test_that("the pkgdown site builds offline without warnings, every export indexed", {
  skip_on_cran()
  root <- docs_root()
  if (!requireNamespace("pkgdown", quietly = TRUE)) {
    skip("pkgdown is not installed (tools/test-env.sh installs Debian's r-cran-pkgdown)")
  }
  site <- withr::local_tempdir("rdarrow-site-")
  warnings <- character()
  withr::local_options(pkgdown.internet = FALSE)
  out <- utils::capture.output(withCallingHandlers(
    pkgdown::build_site(root, override = list(destination = site), examples = FALSE,
                        new_process = FALSE, install = FALSE, preview = FALSE),
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  ))
  expect_identical(warnings, character())
  exports <- getNamespaceExports("rdarrow")
  index <- paste(readLines(file.path(site, "reference", "index.html"), warn = FALSE), collapse = "\n")
  for (e in exports) expect_match(index, e, fixed = TRUE, info = e)
  articles <- c("getting-started", "sources", "saving", "other-languages", "strangers")
  expect_true(all(file.exists(file.path(site, "articles", paste0(articles, ".html")))))
  expect_true(file.exists(file.path(site, "news", "index.html")))
})

test_that("the README is short and the type mapping is written once", {
  root <- docs_root()
  expect_lte(length(readLines(file.path(root, "README.md"))), 200L)
  docs <- c(file.path(root, c("README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "python/README.md",
                              "bench/README.md")),
            list.files(file.path(root, "vignettes"), "\\.Rmd$", full.names = TRUE))
  has_mapping <- vapply(docs, function(f) any(grepl("^\\| R \\| Arrow \\|", readLines(f, warn = FALSE))), NA)
  expect_identical(basename(docs[has_mapping]), "getting-started.Rmd")
})
