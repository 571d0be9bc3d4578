# The release step for offline installs: tools/vendor.sh vendors every crate
# into the source package, which must then install with no crate registry
# (an empty CARGO_HOME and CARGO_NET_OFFLINE=true) and work. Runs on a copy
# of the package's tracked files; needs the source tree (skipped when the
# tests run from an installed package) and takes a few minutes.

test_that("a source package made by tools/vendor.sh installs offline and works", {
  skip_on_cran()
  root <- normalizePath(file.path(testthat::test_path(), "..", ".."), mustWork = FALSE)
  skip_if_not(file.exists(file.path(root, "tools", "vendor.sh")) &&
                file.exists(file.path(root, "src", "rust", "Cargo.lock")),
              "the package source tree is not here")
  skip_if(!nzchar(Sys.which("git")), "git is needed to list the package's files")
  files <- system2("git", c("-C", shQuote(root), "ls-files", "--cached", "--others", "--exclude-standard"),
                   stdout = TRUE, stderr = FALSE)
  skip_if(length(files) == 0L, "not a git checkout")

  work <- withr::local_tempdir("rdarrow-offline-")
  src <- file.path(work, "rdarrow")
  files <- files[file.exists(file.path(root, files))]
  for (d in unique(dirname(files))) dir.create(file.path(src, d), recursive = TRUE, showWarnings = FALSE)
  expect_true(all(file.copy(file.path(root, files), file.path(src, files))))

  # 1. the release step: vendored crates inside the source package
  out <- system2("bash", c(shQuote(file.path(src, "tools", "vendor.sh")), "--no-build-vignettes"),
                 stdout = TRUE, stderr = TRUE)
  tarball <- Sys.glob(file.path(src, "rdarrow_*.tar.gz"))
  expect_length(tarball, 1L)
  if (length(tarball) != 1L) {
    fail(paste(tail(out, 30), collapse = "\n"))
    return(invisible())
  }
  listing <- utils::untar(tarball, list = TRUE)
  expect_true("rdarrow/src/rust/vendor.tar.xz" %in% listing)
  expect_true("rdarrow/src/rust/vendor-config.toml" %in% listing)
  expect_false(any(grepl("^rdarrow/src/rust/target/", listing)))

  # 2. install with the registry out of reach
  lib <- file.path(work, "lib")
  dir.create(lib)
  cargo_home <- file.path(work, "empty-cargo-home")
  dir.create(cargo_home)
  path <- paste(Sys.getenv("PATH"), file.path(Sys.getenv("HOME"), ".cargo", "bin"), sep = ":")
  log <- withr::with_envvar(
    c(CARGO_HOME = cargo_home, CARGO_NET_OFFLINE = "true", PATH = path),
    system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "-l", shQuote(lib), shQuote(tarball)),
            stdout = TRUE, stderr = TRUE)
  )
  status <- attr(log, "status")
  expect_true(is.null(status) || status == 0L, label = paste(tail(log, 30), collapse = "\n"))
  expect_true(any(grepl("--offline", log, fixed = TRUE)))
  # nothing was fetched into the (empty) cargo home
  expect_length(list.files(cargo_home, recursive = TRUE), 0L)

  # 3. the offline build reads what R writes
  f <- file.path(work, "cars.rds")
  saveRDS(mtcars, f)
  got <- callr::r(function(lib, f) {
    library(rdarrow, lib.loc = lib)
    list(where = find.package("rdarrow"), value = read_rdata(f)[[1]])
  }, args = list(lib = lib, f = f))
  expect_identical(normalizePath(got$where), normalizePath(file.path(lib, "rdarrow")))
  expect_identical(got$value, mtcars)
})
