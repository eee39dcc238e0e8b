"""mini-kube apiserver."""
