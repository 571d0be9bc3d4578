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
