"""mini-kube store."""
