"""mini-kube ccm."""
