#' @keywords internal
#' @useDynLib rdarrow, .registration = TRUE
"_PACKAGE"
