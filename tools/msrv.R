# Checks that cargo and rustc are available and that rustc is at least the
# version named in DESCRIPTION's SystemRequirements (e.g. "rustc >= 1.88").
# Sourced by tools/config.R, which configure runs.

desc <- read.dcf("DESCRIPTION")
if (!"SystemRequirements" %in% colnames(desc)) {
  stop(
    "`SystemRequirements` not found in `DESCRIPTION`.\n",
    "Please specify `SystemRequirements: Cargo (Rust's package manager), rustc >= x.y`",
    call. = FALSE
  )
}
sysreqs <- desc[1, "SystemRequirements"]

extract_semver <- function(ver) {
  m <- regmatches(ver, regexpr("[0-9]+\\.[0-9]+(\\.[0-9]+)?", ver))
  if (length(m) == 0L) NA_character_ else m
}

rustc_req <- grep("rustc", strsplit(sysreqs, ",")[[1]], value = TRUE)
msrv <- if (length(rustc_req)) extract_semver(rustc_req[[1]]) else NA_character_

# Like rextendr: look in ~/.cargo/bin as well, where rustup installs.
Sys.setenv(PATH = paste0(Sys.getenv("PATH"), ":", Sys.getenv("HOME"), "/.cargo/bin"))

install_hint <- c(
  "Install Rust (rustc and cargo) with rustup, as described at",
  "https://www.rust-lang.org/tools/install , then make sure",
  "$HOME/.cargo/bin is on the PATH (e.g. `. \"$HOME/.cargo/env\"`).",
  if (!is.na(msrv)) paste0("rdarrow needs rustc >= ", msrv, "; Debian 12's own `rustc` package is older.")
)

tool_version <- function(tool) {
  if (!nzchar(Sys.which(tool))) {
    return(NA_character_)
  }
  out <- tryCatch(
    suppressWarnings(system2(tool, "--version", stdout = TRUE, stderr = TRUE)),
    error = function(e) character()
  )
  status <- attr(out, "status")
  if (length(out) == 0L || (!is.null(status) && status != 0L)) NA_character_ else out[[1]]
}

rustc_version <- tool_version("rustc")
if (is.na(rustc_version)) {
  stop(paste(c(
    "", "----------------------- [RUST NOT FOUND] -------------------------",
    "The 'rustc' compiler was not found on the PATH.", install_hint,
    "-------------------------------------------------------------------"
  ), collapse = "\n"), call. = FALSE)
}

cargo_version <- tool_version("cargo")
if (is.na(cargo_version)) {
  stop(paste(c(
    "", "----------------------- [CARGO NOT FOUND] ------------------------",
    "The 'cargo' command was not found on the PATH.", install_hint,
    "-------------------------------------------------------------------"
  ), collapse = "\n"), call. = FALSE)
}

current <- extract_semver(rustc_version)
if (!is.na(msrv) && !is.na(current) && utils::compareVersion(msrv, current) == 1L) {
  stop(sprintf(paste(
    "",
    "------------------ [UNSUPPORTED RUST VERSION] ------------------",
    "- Minimum supported Rust version is %s.",
    "- Installed Rust version is %s (%s).",
    "Update it with `rustup update stable`.",
    "----------------------------------------------------------------",
    sep = "\n"
  ), msrv, current, Sys.which("rustc")), call. = FALSE)
}

message("Using ", cargo_version, "\nUsing ", rustc_version)
