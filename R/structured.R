# Structured orthogonal random features (random_features(sampling = "structured")).
build_structured_map <- function(kernel, x, D, type) {
  stop_arg("sampling", "= \"structured\" is not available yet")
}
