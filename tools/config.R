# Run by ./configure: checks the Rust toolchain, then writes src/Makevars
# from src/Makevars.in.
#
# Release build by default; set the environment variable DEBUG (to any
# non-empty value) for a debug build, e.g. `DEBUG=1 R CMD INSTALL .`.

source("tools/msrv.R")

is_debug <- nzchar(Sys.getenv("DEBUG"))
if (is_debug) {
  message("Creating DEBUG build.")
}

# cargo's flag for the profile, and the folder under the target dir that
# the profile builds into.
.profile <- if (is_debug) "" else "--release"
.libdir <- if (is_debug) "debug" else "release"

mv_in <- "src/Makevars.in"
mv_out <- "src/Makevars"

if (file.exists(mv_out)) {
  message("Cleaning previous `", mv_out, "`.")
  invisible(file.remove(mv_out))
}

# Linker flags that keep only what R calls of the Rust library: its
# symbols stay inside the shared library (--exclude-libs), so that the
# linker drops every section that R_init_rdarrow does not reach
# (--gc-sections), a third of the library. Used where the linker takes
# them (GNU ld, gold, lld); elsewhere the library links as it is.
.link_flags <- "-Wl,--gc-sections -Wl,--exclude-libs,ALL"
link_flags_work <- function(flags) {
  r <- file.path(R.home("bin"), "R")
  cc <- suppressWarnings(system2(r, c("CMD", "config", "CC"), stdout = TRUE, stderr = FALSE))
  if (!length(cc) || !nzchar(cc[[1]])) return(FALSE)
  dir <- tempfile("rdarrow-link")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  src <- file.path(dir, "t.c")
  writeLines("int rdarrow_link_check(void) { return 0; }", src)
  status <- suppressWarnings(system(
    paste(cc[[1]], "-shared -fPIC", flags, "-o", shQuote(file.path(dir, "t.so")), shQuote(src)),
    ignore.stdout = TRUE, ignore.stderr = TRUE))
  identical(as.integer(status), 0L) && file.exists(file.path(dir, "t.so"))
}
if (!link_flags_work(.link_flags)) {
  message("The linker does not take ", .link_flags, ": the library is linked whole.")
  .link_flags <- ""
}

# The source package with vendored crates (tools/vendor.sh) links the
# system's zstd when pkg-config finds it, as CRAN asks (an installed
# library first, the bundled sources otherwise); zstd-sys then compiles
# nothing. A build from the repository compiles the bundled sources, the
# same for the R package and the Python wheel (one build for both, and a
# self-contained wheel). liblzma and libdeflate stay bundled: their crates
# take a system library only from liblzma 5.8 and libdeflate 1.23 on.
.system_libs <- ""
.system_link <- ""
if (file.exists("src/rust/vendor.tar.xz") && nzchar(Sys.which("pkg-config"))) {
  zstd <- suppressWarnings(system2("pkg-config", c("--modversion", "'libzstd >= 1.5.0'"),
                                   stdout = TRUE, stderr = FALSE))
  if (is.null(attr(zstd, "status")) && length(zstd) == 1L) {
    message("Using the system's zstd ", zstd, " (pkg-config).")
    .system_libs <- "export ZSTD_SYS_USE_PKG_CONFIG=1 &&"
    # the Rust library names it, the shared library links it
    .system_link <- paste(suppressWarnings(system2("pkg-config", c("--libs", "libzstd"), stdout = TRUE)),
                          collapse = " ")
  } else {
    message("zstd: compiled from the vendored sources (pkg-config finds no libzstd >= 1.5.0).")
  }
}

txt <- readLines(mv_in)
txt <- gsub("@PROFILE@", .profile, txt, fixed = TRUE)
txt <- gsub("@LIBDIR@", .libdir, txt, fixed = TRUE)
txt <- gsub("@LINK_FLAGS@", .link_flags, txt, fixed = TRUE)
txt <- gsub("@SYSTEM_LIBS@", .system_libs, txt, fixed = TRUE)
txt <- gsub("@SYSTEM_LINK@", .system_link, txt, fixed = TRUE)

message("Writing `", mv_out, "`.")
con <- file(mv_out, open = "wb")
writeLines(txt, con, sep = "\n")
close(con)

message("`tools/config.R` has finished.")
