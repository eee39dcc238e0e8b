"""Upstream API schemas (from kubernetes-validate) and what is derived from them."""
