# The engine's format vocabulary, for tests that check it against R.

# Every node-type code of the engine's one table, named as R's sources name
# them (`NILSXP`, ..., `ALTREP_SXP`).
sxp_codes <- function() sxp_codes_impl()

# The flags word the engine writes before a node of type `type` (a code of
# sxp_codes()) with these levels, object bit, attributes and tag.
pack_flags <- function(type, levels = 0L, object = FALSE, attr = FALSE, tag = FALSE) {
  pack_flags_impl(as.integer(type), as.integer(levels), isTRUE(object), isTRUE(attr), isTRUE(tag))
}
