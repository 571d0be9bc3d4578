# rdarrow benchmark: R data from where it lives, all measured in the same
# run.
#
# What it measures (the bench/ frame of bench.R, median of --reps K):
#   1. A URL against the same file on disk: read_rds() of a gzip .rds of
#      --rows N rows (default 4e6: about 100 MB) served by a web server on
#      the loopback interface (Python's http.server), against read_rds() of
#      the file itself; target: at most 1.2x.
#   2. Nested objects: a list of the frame and a frame 100 times smaller,
#      saved with save(): rdata_objects(recursive = TRUE) against
#      rdata_objects() (target: listing nested tables costs what listing
#      the file costs, about 1x), and read_rdata("lst$small") against
#      read_rdata("lst") (reading one element decodes nothing of the
#      others).
#
# How to run (from the repository root, rdarrow installed, python3 on the
# PATH):
#   Rscript bench/sources.R                  # about a minute
#   Rscript bench/sources.R --rows 1e6      # quick run

source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "common.R"))
suppressPackageStartupMessages(library(rdarrow))

rows <- bench_opt("rows", 4e6)
reps <- bench_opt("reps", 3)

dir <- tempfile("rdarrow-bench-sources-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
df <- bench_frame(rows)
rds <- file.path(dir, "frame.rds")
saveRDS(df, rds)

python <- Sys.which("python3")
if (!nzchar(python)) stop("python3 is needed for the local web server")
port_file <- file.path(dir, "port")
script <- file.path(dir, "serve.py")
writeLines(c(
  "import http.server, sys",
  "class H(http.server.SimpleHTTPRequestHandler):",
  "    def __init__(self, *a, **k):",
  "        super().__init__(*a, directory=sys.argv[1], **k)",
  "    def log_message(self, *a):",
  "        pass",
  "srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)",
  "print(srv.server_address[1], flush=True)",
  "srv.serve_forever()"
), script)
pid_file <- file.path(dir, "pid")
system(sprintf("%s %s %s > %s 2>/dev/null & echo $! > %s", shQuote(python), shQuote(script),
               shQuote(dir), shQuote(port_file), shQuote(pid_file)))
pid <- as.integer(readLines(pid_file))
on.exit(tools::pskill(pid), add = TRUE)
for (i in 1:100) {
  if (length(readLines(port_file, warn = FALSE))) break
  Sys.sleep(0.05)
}
url <- sprintf("http://127.0.0.1:%s/frame.rds", readLines(port_file)[1])

timed <- function(f) {
  vapply(seq_len(reps), function(i) {
    gc()
    system.time(f())[["elapsed"]]
  }, 0)
}
median_of <- function(x) stats::median(x)

cat("# rdarrow sources benchmark\n\n")
cat(sprintf("- R %s; rdarrow %s; %s rows; .rds %.1f MB (gzip); median of %d\n\n",
            getRversion(), utils::packageVersion("rdarrow"), format(rows, big.mark = ","),
            file.size(rds) / 1e6, reps))

disk <- timed(function() read_rds(rds))
web <- timed(function() read_rds(url))
stopifnot(identical(read_rds(url), df))

small <- df[seq_len(max(1, rows %/% 100)), ]
lst <- list(big = df, small = small)
rda <- file.path(dir, "lst.RData")
save(lst, file = rda)
list_top <- timed(function() rdata_objects(rda))
list_all <- timed(function() rdata_objects(rda, recursive = TRUE))
read_all <- timed(function() read_rdata(rda, "lst"))
read_one <- timed(function() read_rdata(rda, "lst$small"))
stopifnot(identical(read_rdata(rda, "lst$small")[[1]], small))

row <- function(what, ours, anchor, target) {
  ratio <- median_of(ours) / median_of(anchor)
  sprintf("| %s | %.3f | %.3f | %.2f | %s |", what, median_of(ours), median_of(anchor), ratio, target)
}
cat("| ratio (medians) | ours (s) | anchor (s) | value | target |\n|---|---:|---:|---:|---|\n")
cat(row("read_rds(URL) / read_rds(file)", web, disk, "<= 1.2"), "\n")
cat(row("rdata_objects(recursive = TRUE) / rdata_objects()", list_all, list_top, "about 1"), "\n")
cat(row("read_rdata(\"lst$small\") / read_rdata(\"lst\")", read_one, read_all, "< 1: lst$big is not decoded"), "\n")
