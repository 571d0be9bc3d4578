# A short demo, run by tools/setup.sh: save some of R's own data sets into an
# .RData file, then list and read them back with rdarrow, without load().

sets <- c(
  "mtcars", "iris", "airquality", "ToothGrowth", "CO2", "esoph", "warpbreaks",
  "faithful", "quakes", "Titanic", "AirPassengers", "precip", "state.name",
  "euro", "islands"
)
for (n in sets) assign(n, getExportedValue("datasets", n))

f <- file.path(tempdir(), "datasets.RData")
save(list = sets, file = f)
cat(sprintf(
  "Saved %d data sets from package 'datasets' to %s (%s bytes)\n\n",
  length(sets), f, format(file.size(f), big.mark = ",")
))

cat("rdarrow::rdata_objects(f):\n")
print(rdarrow::rdata_objects(f))

cat("\nrdarrow::read_rdata(f):\n")
objs <- rdarrow::read_rdata(f)
same <- vapply(sets, function(n) identical(objs[[n]], get(n)), logical(1))
print(data.frame(
  object = sets,
  class = vapply(objs[sets], function(x) class(x)[[1]], character(1)),
  identical_to_original = same,
  row.names = NULL
))
cat(sprintf("\n%d of %d objects read back identical to the originals.\n",
            sum(same), length(same)))

# The main job: each object to Arrow (handed to the arrow R package without
# a copy, when it is installed) and back to an .RData file with
# arrow_to_rdata(); load() gives back identical() objects.
has_arrow <- requireNamespace("arrow", quietly = TRUE)
cat(sprintf("\nTo Arrow and back%s:\n",
            if (has_arrow) " (rdata_to_arrow() -> arrow::as_arrow_table() -> arrow_to_rdata())"
            else " (rdata_to_arrow() -> arrow_to_rdata(); the arrow R package is not installed)"))
back <- file.path(tempdir(), "back.RData")
circle <- vapply(sets, function(n) {
  s <- rdarrow::rdata_to_arrow(f, object = n)
  x <- if (has_arrow) arrow::as_arrow_table(s) else s
  if (n == "iris" && has_arrow) {
    cat("arrow::as_arrow_table(rdata_to_arrow(f, object = \"iris\"))$schema:\n")
    print(x$schema)
  }
  rdarrow::arrow_to_rdata(x, back, name = n)
  e <- new.env()
  load(back, envir = e)
  identical(e[[n]], get(n))
}, logical(1))
print(data.frame(object = sets, identical_after_arrow = circle, row.names = NULL))
cat(sprintf("\n%d of %d objects came back from Arrow identical() to the originals.\n",
            sum(circle), length(circle)))
