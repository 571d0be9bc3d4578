# The `rdarrow` command-line tool (crate src/rust/rdarrow-cli) for the tests
# that run it (test-cli.R, test-dataset.R, test-lossless-circle.R): the
# binary is built once per session with cargo from the source tree; the
# tests skip where that is not possible (no cargo, or an installed package
# without its sources).

cli_binary <- function() {
  cached <- getOption("rdarrow.test_cli")
  if (!is.null(cached)) {
    if (identical(cached, "")) skip("the rdarrow binary could not be built (see the first failure)")
    return(cached)
  }
  root <- normalizePath(file.path(testthat::test_path(), "..", ".."), mustWork = FALSE)
  manifest <- file.path(root, "src", "rust", "Cargo.toml")
  if (!file.exists(file.path(root, "src", "rust", "rdarrow-cli", "Cargo.toml"))) {
    skip("the rdarrow-cli sources are not available")
  }
  cargo <- Sys.which("cargo")
  if (!nzchar(cargo)) {
    home_cargo <- file.path(Sys.getenv("HOME"), ".cargo", "bin", "cargo")
    cargo <- if (file.exists(home_cargo)) home_cargo else ""
  }
  if (!nzchar(cargo)) skip("cargo is not available")
  out <- suppressWarnings(system2(
    cargo,
    c("build", "--release", "-p", "rdarrow-cli", "--manifest-path", shQuote(manifest)),
    stdout = TRUE, stderr = TRUE
  ))
  # cargo's target directory: the cache's when the environment names one
  # (tools/env.sh), else the workspace's own
  target <- Sys.getenv("CARGO_TARGET_DIR", file.path(root, "src", "rust", "target"))
  bin <- file.path(target, "release", "rdarrow")
  status <- attr(out, "status")
  if ((!is.null(status) && status != 0) || !file.exists(bin)) {
    options(rdarrow.test_cli = "")
    fail(paste(c("cargo build -p rdarrow-cli failed:", tail(out, 30)), collapse = "\n"))
    skip("the rdarrow binary could not be built")
  }
  options(rdarrow.test_cli = bin)
  bin
}

# Run the binary; returns its exit status, standard output and error.
run_cli <- function(args, stdout_file = NULL) {
  bin <- cli_binary()
  out <- if (is.null(stdout_file)) tempfile() else stdout_file
  err <- tempfile()
  on.exit(unlink(c(err, if (is.null(stdout_file)) out)), add = TRUE)
  status <- system2(bin, shQuote(args), stdout = out, stderr = err)
  list(
    status = status,
    stdout = if (is.null(stdout_file)) readLines(out, warn = FALSE) else character(),
    stderr = readLines(err, warn = FALSE)
  )
}
