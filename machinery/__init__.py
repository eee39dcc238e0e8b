"""The bottom layer, as apimachinery is: quantities, label selectors, resource references and the other
helpers every layer shares. It imports nothing else of mini-kube's."""
