"""mini-kube kubectl_lite."""
