"""The conformance suite's sample API server (`registry.k8s.io/e2e-test-images/sample-apiserver`,
k8s.io/sample-apiserver), in Python: the wardle.example.com API (v1alpha1 flunders and fischers, v1beta1
flunders) an aggregator serves through an APIService, as an extension API server does it: HTTPS with the
certificate it is given, objects kept in etcd (`--etcd-servers`), callers authenticated by delegation (the
front-proxy headers of a client certificate from kube-system/extension-apiserver-authentication's
requestheader CA, client certificates of its client CA, bearer tokens by TokenReview) and authorized by
SubjectAccessReview, with the Pod's own in-cluster credentials. `python -m mini_kube.kubelet.sample_apiserver
[flags]`; kubelet/entrypoints.py runs it for the image."""
