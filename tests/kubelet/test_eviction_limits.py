"""The ephemeral-storage limit the kubelet enforces on a Pod whose containers each set one: their sum, printed in
the first limit's notation as upstream's Quantity.Add keeps it (machinery.quantity prints it)."""

from __future__ import annotations

from mini_kube.kubelet.eviction import limits


def _pod(*limits_: str) -> dict:
    return {"spec": {"containers": [{"name": f"c{i}", "resources": {"limits": {"ephemeral-storage": text}}}
                                    for i, text in enumerate(limits_)]}}


def test_the_pod_limit_is_the_sum_in_the_first_limits_notation():
    assert limits(_pod("1Mi", "1Mi"))[0] == (2 * 1024 * 1024, "2Mi")
    assert limits(_pod("1Mi", "512Ki"))[0] == (1536 * 1024, "1536Ki")
    assert limits(_pod("1M", "500k"))[0] == (1_500_000, "1500k")
    assert limits(_pod("1024", "1024"))[0] == (2048, "2048")  # plain numbers are DecimalSI: not "2Ki"
    assert limits(_pod("2Gi"))[0] == (2 * 1024 ** 3, "2Gi")
