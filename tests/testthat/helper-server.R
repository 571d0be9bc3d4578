# A web server on the loopback interface, for the readers of http URLs.

# A web server on 127.0.0.1 serving `dir`: the files as they are, and two
# broken ways: /cut/<file> sends the headers of the whole file but closes
# after half of it, /page/<anything> answers 200 with an HTML page.
local_server <- function(dir, env = parent.frame()) {
  python <- Sys.getenv("RETICULATE_PYTHON", Sys.which("python3"))
  if (!nzchar(python) || !file.exists(python)) skip("no Python to run a local web server")
  script <- withr::local_tempfile(fileext = ".py", .local_envir = env)
  writeLines(c(
    "import http.server, os, sys",
    "root = sys.argv[1]",
    "class H(http.server.SimpleHTTPRequestHandler):",
    "    def __init__(self, *a, **k):",
    "        super().__init__(*a, directory=root, **k)",
    "    def log_message(self, *a):",
    "        pass",
    "    def do_GET(self):",
    "        if self.path.startswith('/cut/'):",
    "            data = open(os.path.join(root, self.path[5:]), 'rb').read()",
    "            self.send_response(200)",
    "            self.send_header('Content-Length', str(len(data)))",
    "            self.end_headers()",
    "            self.wfile.write(data[: len(data) // 2])",
    "            self.wfile.flush()",
    "            self.close_connection = True",
    "            return",
    "        if self.path.startswith('/page/'):",
    "            body = b'<!DOCTYPE html><html><body>Not here</body></html>'",
    "            self.send_response(200)",
    "            self.send_header('Content-Type', 'text/html')",
    "            self.send_header('Content-Length', str(len(body)))",
    "            self.end_headers()",
    "            self.wfile.write(body)",
    "            return",
    "        super().do_GET()",
    "srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)",
    "print(srv.server_address[1], flush=True)",
    "srv.serve_forever()"
  ), script)
  port_file <- withr::local_tempfile(.local_envir = env)
  proc <- start_background(python, c(script, dir), port_file)
  withr::defer(tools::pskill(proc), envir = env)
  for (i in 1:100) {
    if (file.exists(port_file) && length(readLines(port_file, warn = FALSE))) break
    Sys.sleep(0.05)
  }
  port <- readLines(port_file, warn = FALSE)[1]
  if (is.na(port)) skip("the local web server did not start")
  sprintf("http://127.0.0.1:%s", port)
}

# Start `python script dir` in the background, its first line of output
# in `out`; returns its process id.
start_background <- function(python, args, out) {
  pid_file <- tempfile()
  system(sprintf("%s %s > %s 2>/dev/null & echo $! > %s",
                 shQuote(python), paste(shQuote(args), collapse = " "), shQuote(out), shQuote(pid_file)))
  pid <- as.integer(readLines(pid_file))
  unlink(pid_file)
  pid
}
