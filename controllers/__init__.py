"""mini-kube controllers."""
