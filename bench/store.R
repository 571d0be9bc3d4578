# rdarrow benchmark: R data in an object store (S3), against the same work
# on disk, measured in the same run.
#
# What it measures (the bench/ frame of bench.R, median of --reps K):
#   1. read_rds("s3://...") of a gzip .rds of --rows N rows (default 4e6:
#      about 100 MB) from an S3-compatible server on the loopback interface
#      (moto's server mode), against read_rds() of the file on disk; target
#      at most 1.2x.
#   2. rdata_to_parquet() from a bucket into a bucket, against disk to
#      disk; target at most 1.3x.
# The server (moto, in the Python environment of tools/setup.sh) is
# started here and stopped at the end.
#
# How to run (from the repository root, rdarrow installed):
#   Rscript bench/store.R                  # about two minutes
#   Rscript bench/store.R --rows 1e6       # quick run

source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "common.R"))
suppressPackageStartupMessages(library(rdarrow))

rows <- bench_opt("rows", 4e6)
reps <- bench_opt("reps", 3)

python <- Sys.getenv("RETICULATE_PYTHON", file.path(getwd(), ".venv", "bin", "python"))
moto <- file.path(dirname(python), "moto_server")
if (!file.exists(moto)) stop("moto_server not found beside ", python, " (run tools/setup.sh)")

dir <- tempfile("rdarrow-bench-store-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
df <- bench_frame(rows)
rds <- file.path(dir, "frame.rds")
saveRDS(df, rds)

port <- 20000L + sample.int(30000L, 1L)
server <- processx::process$new(moto, c("-H", "127.0.0.1", "-p", port), stdout = NULL, stderr = NULL,
                                cleanup = TRUE)
on.exit(server$kill(), add = TRUE)
endpoint <- sprintf("http://127.0.0.1:%d", port)
# uploads unsigned, as they are by default over HTTPS (a real store); this
# server speaks plain HTTP, where the default signs every byte
Sys.setenv(AWS_ACCESS_KEY_ID = "bench", AWS_SECRET_ACCESS_KEY = "bench", AWS_REGION = "us-east-1",
           AWS_ENDPOINT_URL = endpoint, AWS_ALLOW_HTTP = "true", AWS_UNSIGNED_PAYLOAD = "true")
for (i in 1:300) {
  ok <- tryCatch({
    close(socketConnection("127.0.0.1", port, open = "r+b", timeout = 1))
    TRUE
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (ok) break
  Sys.sleep(0.1)
}
boto <- function(code) {
  res <- system2(python, c("-c", shQuote(paste0(
    "import boto3\nc = boto3.client('s3', endpoint_url='", endpoint, "', region_name='us-east-1')\n", code
  ))), stdout = TRUE, stderr = TRUE)
  if (!is.null(attr(res, "status"))) stop(paste(res, collapse = "\n"))
}
boto(sprintf("c.create_bucket(Bucket='lab')\nc.upload_file('%s', 'lab', 'frame.rds')", rds))

# the server's CPU seconds so far (utime + stime of its process)
server_cpu <- function() {
  st <- strsplit(readLines(sprintf("/proc/%d/stat", server$get_pid())), " ")[[1]]
  (as.numeric(st[14]) + as.numeric(st[15])) / 100
}
cpu <- new.env()
timed <- function(f, what) {
  out <- vapply(seq_len(reps), function(i) {
    gc()
    s0 <- server_cpu()
    t <- system.time(f())
    cpu[[what]] <- c(cpu[[what]], t[["user.self"]] + t[["sys.self"]] + t[["user.child"]] + t[["sys.child"]],
                     server_cpu() - s0)
    t[["elapsed"]]
  }, 0)
  out
}

cat("# rdarrow object store benchmark\n\n")
cat(sprintf("- R %s; rdarrow %s; %s rows; .rds %.1f MB (gzip); S3 server: moto on the loopback interface; median of %d\n\n",
            getRversion(), utils::packageVersion("rdarrow"), format(rows, big.mark = ","),
            file.size(rds) / 1e6, reps))

url <- "s3://lab/frame.rds"
stopifnot(identical(read_rds(url), df))
disk <- timed(function() read_rds(rds), "disk")
s3 <- timed(function() read_rds(url), "s3")
pq_disk <- timed(function() rdata_to_parquet(rds, file.path(dir, "frame.parquet")), "pq_disk")
pq_s3 <- timed(function() rdata_to_parquet(url, "s3://lab/lake/frame.parquet"), "pq_s3")
# each side alone: where the time of bucket -> bucket goes
pq_in <- timed(function() rdata_to_parquet(url, file.path(dir, "from-s3.parquet")), "pq_in")
pq_out <- timed(function() rdata_to_parquet(rds, "s3://lab/lake/from-disk.parquet"), "pq_out")

row <- function(what, ours, anchor, target) {
  ratio <- stats::median(ours) / stats::median(anchor)
  sprintf("| %s | %.3f | %.3f | %.2f | %s |", what, stats::median(ours), stats::median(anchor), ratio, target)
}
cat("| ratio (medians) | ours (s) | anchor (s) | value | target |\n|---|---:|---:|---:|---|\n")
cat(row("read_rds(s3://) / read_rds(file)", s3, disk, "<= 1.2"), "\n")
cat(row("rdata_to_parquet(s3:// -> s3://) / (file -> file)", pq_s3, pq_disk, "<= 1.3"), "\n")
cat(row("rdata_to_parquet(s3:// -> file) / (file -> file)", pq_in, pq_disk, "(one side)"), "\n")
cat(row("rdata_to_parquet(file -> s3://) / (file -> file)", pq_out, pq_disk, "(one side)"), "\n")

# The CPU both sides used (the server shares this machine's cores): with
# `cores` cores, no schedule finishes before (ours + server) / cores.
cores <- parallel::detectCores()
per_rep <- function(what) {
  x <- matrix(cpu[[what]], nrow = 2)
  c(ours = stats::median(x[1, ]), server = stats::median(x[2, ]))
}
cat(sprintf("\nCPU seconds (median per run; %d cores; the server runs on the same cores):\n\n", cores))
cat("| work | rdarrow CPU (s) | server CPU (s) | floor: (rdarrow + server) / cores (s) | floor / anchor |\n|---|---:|---:|---:|---:|\n")
for (w in list(c("disk", "disk", "read_rds(file)"), c("s3", "disk", "read_rds(s3://)"),
              c("pq_disk", "pq_disk", "rdata_to_parquet(file -> file)"),
              c("pq_s3", "pq_disk", "rdata_to_parquet(s3:// -> s3://)"),
              c("pq_in", "pq_disk", "rdata_to_parquet(s3:// -> file)"),
              c("pq_out", "pq_disk", "rdata_to_parquet(file -> s3://)"))) {
  u <- per_rep(w[1])
  floor <- max(sum(u) / cores, stats::median(get(w[2])))
  cat(sprintf("| %s | %.2f | %.2f | %.2f | %.2f |\n", w[3], u[["ours"]], u[["server"]], floor,
              floor / stats::median(get(w[2]))))
}
