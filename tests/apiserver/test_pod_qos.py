"""status.qosClass as upstream's ComputePodQOS sets it at create: quantities compared by value (`1` == `1000m`),
requests summed over containers and defaulted from limits, zero quantities as unset."""

from __future__ import annotations

import pytest
from mini_kube.machinery.refs import PODS


def _pod(name: str, *resources: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": f"c{i}", "image": "busybox", "resources": r}
                                    for i, r in enumerate(resources)]}}


@pytest.mark.parametrize(("resources", "qos"), [
    ([{}], "BestEffort"),
    ([{"requests": {"cpu": "0"}}], "BestEffort"),
    ([{"requests": {"ephemeral-storage": "1Gi"}}], "BestEffort"),
    ([{"limits": {"cpu": "1", "memory": "128Mi"}}], "Guaranteed"),
    ([{"limits": {"cpu": "1", "memory": "128Mi"}, "requests": {"cpu": "1000m", "memory": "134217728"}}],
     "Guaranteed"),
    ([{"limits": {"cpu": "1", "memory": "128Mi"}}, {"limits": {"cpu": "500m", "memory": "1Gi"}}], "Guaranteed"),
    ([{"limits": {"cpu": "1", "memory": "128Mi"}, "requests": {"cpu": "500m"}}], "Burstable"),
    ([{"limits": {"cpu": "1", "memory": "128Mi"}}, {}], "Burstable"),
    ([{"limits": {"memory": "50Mi"}}], "Burstable"),
    ([{"requests": {"cpu": "100m"}}], "Burstable"),
])
def test_qos_class(mini_kube_session, resources, qos):
    name = f"q{abs(hash(repr(resources))) % 10**8}"
    created = mini_kube_session.client.create(PODS, _pod(name, *resources), "default")
    mini_kube_session.client.delete(PODS, name, "default")
    assert created["status"]["qosClass"] == qos
