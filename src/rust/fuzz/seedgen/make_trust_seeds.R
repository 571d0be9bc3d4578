# Seeds of the trust_rule target: files holding promises where R keeps
# none, crafted byte by byte by the R tests' own helper
# (tests/testthat/helper-crafted.R), in XDR, binary and ASCII; promises R
# keeps (closures' unevaluated arguments, `...`, method dispatch's
# promises of promises in lme4's fits where lme4 is installed), active
# bindings, byte code and namespace references. Uncompressed, so that
# mutations reach the nodes.
# Usage: Rscript make_trust_seeds.R OUT_DIR
out <- commandArgs(TRUE)[1]
dir.create(out, showWarnings = FALSE, recursive = TRUE)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(here, "..", "..", "..", "..", "tests", "testthat", "helper-crafted.R"))
cases <- promise_cases("/nonexistent/ran")
for (n in names(cases)) for (format in c("xdr", "binary", "ascii")) {
  cs <- cases[[n]]
  writeBin(craft_bytes(cs$node, format, rdata = cs$rdata), file.path(out, sprintf("crafted_%s_%s", n, format)))
}
writeBin(craft_bytes(cr_list(cr_ints(1L), cr_namespace("utils"))), file.path(out, "crafted_namespace"))
writeBin(craft_bytes(cr_altrep("vroom_int", "vroom", cr_ints(1:3))), file.path(out, "crafted_altrep"))
adder <- function(n) function(x) x + n
dots <- (function(...) function() list(...))(1 + 1, "b")
e <- new.env()
makeActiveBinding("a", function() 1, e)
saveRDS(list(add = adder(1 + 2), dots = dots, active = e, bc = compiler::cmpfun(function(x) x + 1)),
        file.path(out, "kept_promises.rds"), compress = FALSE)
if (requireNamespace("lme4", quietly = TRUE)) {
  suppressMessages(library(lme4))
  fm1 <- lmer(Reaction ~ Days + (Days | Subject), sleepstudy)
  saveRDS(fm1, file.path(out, "lme4_fit.rds"), compress = FALSE)
}
