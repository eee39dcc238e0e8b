"""A delete raced by other writes is not a conflict (found by `kubectl delete` of an Agent while its operator
wrote status): without a resourceVersion precondition the server reads again and retries, as upstream's
conditional delete does; with one, a changed object is still 409."""

from __future__ import annotations

import asyncio

import pytest
from mini_kube.client import Conflict, NotFound
from mini_kube.machinery.refs import CONFIGMAPS


@pytest.fixture(scope="module")
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, scheduler=False) as cluster:
        yield cluster


@pytest.mark.slow
def test_deletes_raced_by_writes_succeed(kube):
    async def race() -> int:
        client = kube.client.async_client
        failures = 0
        for i in range(15):
            name = f"raced-{i}"
            await client.create(CONFIGMAPS, {"metadata": {"name": name, "finalizers": ["example.com/hold"]},
                                             "data": {"n": "0"}}, "default")
            writes = [client.patch(CONFIGMAPS, name, {"data": {"n": str(j)}}, "default") for j in range(15)]
            results = await asyncio.gather(*writes[:8], client.delete(CONFIGMAPS, name, "default"), *writes[8:],
                                           return_exceptions=True)
            failures += isinstance(results[8], Exception)
            obj = await client.get(CONFIGMAPS, name, "default")
            assert obj["metadata"].get("deletionTimestamp")
            await client.patch(CONFIGMAPS, name, {"metadata": {"finalizers": None}}, "default")
        return failures

    assert kube.run(race(), timeout=120) == 0


def test_a_write_landing_while_a_delete_is_admitted_does_not_fail_it(kube):
    """The window made certain: an admission plugin (the kind a webhook is) writes the object while its delete is
    being admitted, as an operator's status write did."""
    from mini_kube.apiserver.admission.chain import AdmissionPlugin

    class WriteDuringDelete(AdmissionPlugin):
        operations = ("DELETE",)
        done = False

        def handles(self, attrs) -> bool:
            return attrs.operation == "DELETE" and attrs.name == "contested" and not self.done

        async def mutate(self, attrs) -> None:
            type(self).done = True
            await kube.client.async_client.patch(CONFIGMAPS, "contested", {"data": {"k": "changed"}}, "default")

    plugins = kube.server.registry.admission.plugins
    plugins.append(WriteDuringDelete())
    try:
        kube.client.create(CONFIGMAPS, {"metadata": {"name": "contested"}}, "default")
        kube.client.delete(CONFIGMAPS, "contested", "default")
        with pytest.raises(NotFound):
            kube.client.get(CONFIGMAPS, "contested", "default")
    finally:
        plugins.pop()


def test_a_resource_version_precondition_still_conflicts(kube):
    client = kube.client
    made = client.create(CONFIGMAPS, {"metadata": {"name": "pinned"}}, "default")
    client.patch(CONFIGMAPS, "pinned", {"data": {"k": "v"}}, "default")
    with pytest.raises(Conflict):
        client.delete(CONFIGMAPS, "pinned", "default",
                      {"preconditions": {"resourceVersion": made["metadata"]["resourceVersion"]}})
