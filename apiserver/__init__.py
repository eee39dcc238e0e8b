"""mini-kube apiserver."""

VERSION = "0.1.0"
"""mini-kube's own version (pyproject's); the API server reports Kubernetes v1.32.0 with it as build metadata."""
