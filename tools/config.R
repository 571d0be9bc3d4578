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

txt <- readLines(mv_in)
txt <- gsub("@PROFILE@", .profile, txt, fixed = TRUE)
txt <- gsub("@LIBDIR@", .libdir, txt, fixed = TRUE)
txt <- gsub("@LINK_FLAGS@", .link_flags, txt, fixed = TRUE)

message("Writing `", mv_out, "`.")
con <- file(mv_out, open = "wb")
writeLines(txt, con, sep = "\n")
close(con)

message("`tools/config.R` has finished.")
