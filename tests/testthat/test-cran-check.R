# The source package as CRAN takes it: tools/vendor.sh builds it with the
# crates the R package needs vendored (only those, for the platforms R
# builds on), and `R CMD check --as-cran` passes it with no ERROR or
# WARNING and only the NOTEs CRAN accepts for a new package with vendored
# Rust crates. The check installs it with no crate registry (an empty
# CARGO_HOME and CARGO_NET_OFFLINE=true) and runs its examples and
# vignettes as CRAN does (its tests are this suite, which tools/test.sh
# runs). Runs on a copy of the package's tracked files; needs the
# source tree (skipped when the tests run from an installed package) and
# takes a few minutes.
#
# What this machine cannot do is left out and said so: no network (the
# CRAN incoming checks that ask CRAN's servers, and the clock check), no
# LaTeX (the PDF manual: --no-manual). Where the environment points cargo
# at a target directory (RDARROW_TARGET_DIR, the test suite's cache), the
# check's build uses one beside it, kept between runs.

# NOTEs CRAN accepts: a new submission, the size of the vendored crates
# and of the installed library, and what comes of this machine being
# offline.
accepted_notes <- c(
  "CRAN incoming feasibility",      # "New submission", the tarball's size
  "installed package size",         # the compiled Rust library
  "for future file timestamps"      # no clock server reachable
)

test_that("the vendored source package passes R CMD check --as-cran, offline", {
  skip_on_cran()
  root <- normalizePath(file.path(testthat::test_path(), "..", ".."), mustWork = FALSE)
  skip_if_not(file.exists(file.path(root, "tools", "vendor.sh")) &&
                file.exists(file.path(root, "src", "rust", "Cargo.lock")),
              "the package source tree is not here")
  skip_if(!nzchar(Sys.which("git")), "git is needed to list the package's files")
  files <- system2("git", c("-C", shQuote(root), "ls-files", "--cached", "--others", "--exclude-standard"),
                   stdout = TRUE, stderr = FALSE)
  skip_if(length(files) == 0L, "not a git checkout")

  work <- withr::local_tempdir("rdarrow-cran-")
  src <- file.path(work, "rdarrow")
  files <- files[file.exists(file.path(root, files))]
  for (d in unique(dirname(files))) dir.create(file.path(src, d), recursive = TRUE, showWarnings = FALSE)
  expect_true(all(file.copy(file.path(root, files), file.path(src, files))))

  # the two builds of the package (R CMD build's, for the vignettes, and
  # the check's install) each in a target directory of its own beside the
  # suite's (when it has one), kept between runs: built in R's make with
  # the settings of R CMD build and R CMD check, they would otherwise
  # overwrite each other's artifacts and those cargo built for the other
  # tests
  target <- Sys.getenv("RDARROW_TARGET_DIR")
  beside <- function(suffix) if (nzchar(target)) paste0(target, suffix) else NA

  # 1. the release step
  out <- withr::with_envvar(
    c(RDARROW_TARGET_DIR = beside("-vendored-build")),
    system2("bash", shQuote(file.path(src, "tools", "vendor.sh")), stdout = TRUE, stderr = TRUE)
  )
  tarball <- Sys.glob(file.path(src, "rdarrow_*.tar.gz"))
  expect_length(tarball, 1L)
  if (length(tarball) != 1L) {
    fail(paste(tail(out, 30), collapse = "\n"))
    return(invisible())
  }
  listing <- utils::untar(tarball, list = TRUE)
  expect_true("rdarrow/src/rust/vendor.tar.xz" %in% listing)
  expect_true("rdarrow/src/rust/vendor-config.toml" %in% listing)
  expect_true("rdarrow/inst/doc/getting-started.html" %in% listing)
  # what the R package does not compile stays out
  expect_false(any(grepl("^rdarrow/src/rust/(target|rdarrow-py|rdarrow-cli|fuzz)/", listing)))
  expect_false(any(grepl("^rdarrow/(python|bench|\\.ci)/", listing)))
  # only the R package's crates, and of those only the files a build on
  # the platforms R builds on reads (tools/vendor_prune.py): 9.8 MiB, where
  # every crate whole was 16.8 MiB; the bound catches a vendoring that
  # keeps them whole or takes the other crates' trees
  exdir <- file.path(work, "unpacked")
  utils::untar(tarball, files = c("rdarrow/src/rust/vendor.tar.xz", "rdarrow/src/rust/Cargo.toml"), exdir = exdir)
  vendored_mb <- file.size(file.path(exdir, "rdarrow/src/rust/vendor.tar.xz")) / 2^20
  message(sprintf("vendored crates: %.1f MiB (xz), the source package %.1f MiB",
                  vendored_mb, file.size(tarball) / 2^20))
  expect_lt(vendored_mb, 10)
  # the release step checked the R binding for every platform it vendors for
  expect_true(any(grepl("checking the R binding for aarch64-pc-windows-gnullvm|what the builds read: from the cache", out)),
              label = paste(tail(out, 20), collapse = "\n"))
  members <- grep("^members", readLines(file.path(exdir, "rdarrow/src/rust/Cargo.toml")), value = TRUE)
  expect_identical(members, 'members = ["rdarrow-format", "rdarrow-arrow", "rdarrow-r"]')

  # 2. R CMD check --as-cran, the crate registry out of reach
  cargo_home <- file.path(work, "empty-cargo-home")
  dir.create(cargo_home)
  path <- paste(Sys.getenv("PATH"), file.path(Sys.getenv("HOME"), ".cargo", "bin"), sep = ":")
  # the check's output folder: beside the suite's target directory when
  # there is one, the same path each run, so that the crates it unpacks
  # keep their place and cargo reuses what it built from them last time
  check_dir <- if (nzchar(target)) beside("-check-output") else file.path(work, "check")
  unlink(check_dir, recursive = TRUE)
  dir.create(check_dir)
  log <- withr::with_envvar(
    c(CARGO_HOME = cargo_home, CARGO_NET_OFFLINE = "true", PATH = path,
      RDARROW_TARGET_DIR = beside("-vendored-check"),
      # as on CRAN, which has no peer corpus: the corpus tests skip in the
      # check (the suite itself runs them)
      RDARROW_PEERS_DIR = NA,
      NOT_CRAN = NA, `_R_CHECK_CRAN_INCOMING_REMOTE_` = "false",
      `_R_CHECK_SYSTEM_CLOCK_` = "false", `_R_CHECK_FORCE_SUGGESTS_` = "false"),
    system2(file.path(R.home("bin"), "R"),
            # --no-tests: the suite is this run's own testthat step (with the
            # corpus and every consumer); the check runs the examples and
            # vignettes, and every check of the package's form
            c("CMD", "check", "--as-cran", "--no-manual", "--no-tests", "-o", shQuote(check_dir), shQuote(tarball)),
            stdout = TRUE, stderr = TRUE)
  )
  check_log <- file.path(check_dir, "rdarrow.Rcheck", "00check.log")
  expect_true(file.exists(check_log))
  if (!file.exists(check_log)) {
    fail(paste(tail(log, 40), collapse = "\n"))
    return(invisible())
  }
  lines <- readLines(check_log, warn = FALSE)
  results <- grep("^\\* checking .* \\.\\.\\. (NOTE|WARNING|ERROR)$", lines, value = TRUE)
  status <- grep("^Status: ", lines, value = TRUE)
  message("R CMD check --as-cran: ", if (length(status)) status else "(no status)",
          if (length(results)) paste0("\n  ", results, collapse = "") else "")
  detail <- paste(tail(lines, 60), collapse = "\n")
  expect_false(any(grepl("(WARNING|ERROR)$", results)), label = detail)
  notes <- grep("NOTE$", results, value = TRUE)
  unexpected <- notes[!vapply(notes, function(n) any(vapply(accepted_notes, grepl, TRUE, x = n, fixed = TRUE)), TRUE)]
  expect_length(unexpected, 0L)
  if (length(unexpected)) message(detail)

  # the install was offline, reported cargo and rustc, fetched nothing
  install_log <- readLines(file.path(check_dir, "rdarrow.Rcheck", "00install.out"), warn = FALSE)
  expect_true(any(grepl("--offline", install_log, fixed = TRUE)))
  expect_true(any(grepl("^Using cargo [0-9]", install_log)))
  expect_true(any(grepl("^Using rustc [0-9]", install_log)))
  expect_length(list.files(cargo_home, recursive = TRUE, all.files = TRUE), 0L)

  # 3. the package the check installed reads what R writes
  f <- file.path(work, "cars.rds")
  saveRDS(mtcars, f)
  lib <- file.path(check_dir, "rdarrow.Rcheck")
  got <- callr::r(function(lib, f) {
    library(rdarrow, lib.loc = lib)
    list(where = find.package("rdarrow"), value = read_rdata(f)[[1]])
  }, args = list(lib = lib, f = f))
  expect_identical(normalizePath(got$where), normalizePath(file.path(lib, "rdarrow")))
  expect_identical(got$value, mtcars)
})
