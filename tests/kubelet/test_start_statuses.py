"""The statuses a Pod's start writes, as upstream's kubelet writes them: Pending without a Pod IP (the status
generated before the sandbox exists), then Running with its IP. Upstream's pod worker makes the sandbox and
starts the containers in one sync, so no status says Pending with an IP in between (that write cost every start
a status patch, and the API server's and the watchers' work on it)."""

from __future__ import annotations

from mini_kube.machinery.refs import PODS

from .conftest import pod


def test_a_pod_goes_from_pending_without_an_ip_to_running_with_it(kube, ns):
    listed = kube.client.list(PODS, ns)["metadata"]["resourceVersion"]
    kube.client.create(PODS, pod("quick", {"name": "main", "image": "busybox:1.36", "command": ["sleep", "300"]}), ns)

    async def statuses() -> list[dict]:
        seen = []
        async for event in kube.client.async_client.watch(PODS, ns, resource_version=listed,
                                                          fieldSelector="metadata.name=quick"):
            seen.append(event["object"].get("status") or {})
            if seen[-1].get("phase") == "Running":
                return seen
        return seen

    seen = [(s.get("phase"), bool(s.get("podIP"))) for s in kube.run(statuses(), timeout=60)]
    assert set(seen[:-1]) == {("Pending", False)} and seen[-1] == ("Running", True), seen
    conditions = {c["type"]: c["status"] for c in kube.client.get(PODS, "quick", ns)["status"]["conditions"]}
    assert conditions["PodReadyToStartContainers"] == "True"
