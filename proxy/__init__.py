"""mini-kube proxy."""
