"""agnhost, the conformance suite's test image (`registry.k8s.io/e2e-test-images/agnhost`), in Python.

`python -m mini_kube.kubelet.agnhost SUBCOMMAND [--flag=value ...]` runs one subcommand with the behaviour and
answers of upstream's `test/images/agnhost/<subcommand>`: one module per subcommand, on the standard library and
mini-kube's machinery layer (Go durations). Servers listen on every address of the container's network
namespace, as agnhost does (`:PORT`); outside a Pod (tests) `AGNHOST_BIND_ADDRESS` names the one address to
listen on instead."""
