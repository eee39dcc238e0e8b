"""The cloud-controller-manager and its fake cloud: load balancers that are real listeners on 127.0.0.0/8
(`cloud.py`, `relay.py`), the service controller (`service_lb.py`), the cloud node controllers (`node.py`), and
the manager that runs them (`manager.py`; `mini-kube ccm`, in-process in `mini-kube serve`)."""
