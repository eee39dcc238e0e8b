"""The kubelet's final delete of a Pod (grace period 0, once its containers are gone) is retried with back-off
after an API error until the Pod is gone, as upstream's status manager does: a real validating webhook makes the
API server answer 500 to the first attempts."""

from __future__ import annotations

from mini_kube.machinery.refs import PODS

from .conftest import eventually, gone, pod, status_of, validating_webhook


def test_final_delete_is_retried_after_api_errors(process_cluster, process_namespace, webhook_server):
    kube, ns = process_cluster, process_namespace
    refusals = [2]

    def flaky(request: dict) -> dict:
        final = ((request.get("oldObject") or {}).get("metadata") or {}).get("deletionTimestamp")
        if final and refusals[0]:  # the kubelet's delete: the Pod is already terminating
            refusals[0] -= 1
            return {"allowed": False, "status": {"code": 500, "reason": "InternalError", "message": "try again"}}
        return {"allowed": True}

    kube.client.create(PODS, pod("flaky", {"name": "main", "image": "busybox", "command": ["sleep", "300"]},
                                 terminationGracePeriodSeconds=5), ns)
    eventually(lambda: status_of(kube, ns, "flaky").get("phase") == "Running")
    with validating_webhook(kube, webhook_server, ns, flaky, resources=("pods",),
                            operations=("DELETE",)) as reviews:
        kube.client.delete(PODS, "flaky", ns)
        eventually(lambda: gone(kube, ns, "flaky"))
    finals = [r for r in reviews if ((r["request"].get("oldObject") or {}).get("metadata") or {}).get(
        "deletionTimestamp")]
    assert refusals == [0] and len(finals) == 3  # two refused, the third went through
