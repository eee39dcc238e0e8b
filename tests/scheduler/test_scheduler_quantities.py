"""How the scheduler counts quantities the API server accepts, without a cluster."""

from __future__ import annotations

from mini_kube.scheduler.resources import CPU, MEMORY, amount, pod_requests


def test_quantities_count_as_milli_value_and_value():
    assert [amount(CPU, q) for q in ("100m", "0.5", 2, "1e-9", "1.5Gi")] == [100, 500, 2000, 1, 1610612736000]
    assert [amount(MEMORY, q) for q in ("1Gi", "1e3", "1500m", "bogus")] == [2**30, 1000, 2, 0]
    # what a node reports (its memory in Ki), and every binary suffix; lowercase ones are not quantities
    assert [amount(MEMORY, q) for q in ("24684096Ki", "1Ki", "1Mi", "1Ti", "1Pi", "1Ei", "1ki", "1mi")] == [
        24684096 * 2**10, 2**10, 2**20, 2**40, 2**50, 2**60, 0, 0]


def test_absurd_quantities_saturate_at_int64():
    """1e2147483647 is a valid quantity; as an exact fraction it took the scheduler's thread forever."""
    pod = {"spec": {"containers": [{"resources": {"requests": {"cpu": "1e2147483647", "memory": "-1e99999999"}}}]}}
    assert pod_requests(pod) == {CPU: 2**63 - 1, MEMORY: -(2**63 - 1)}
