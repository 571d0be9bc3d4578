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

txt <- readLines(mv_in)
txt <- gsub("@PROFILE@", .profile, txt, fixed = TRUE)
txt <- gsub("@LIBDIR@", .libdir, txt, fixed = TRUE)

message("Writing `", mv_out, "`.")
con <- file(mv_out, open = "wb")
writeLines(txt, con, sep = "\n")
close(con)

message("`tools/config.R` has finished.")
