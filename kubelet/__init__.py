"""The kubelet: registers a Node, renews its Lease, and runs the Pods bound to it through a runtime (real local
processes in their own network and mount namespaces, or a simulated timeline), reporting their status as the
real kubelet does; serves logs, exec, attach and port-forward for the API server to proxy."""
