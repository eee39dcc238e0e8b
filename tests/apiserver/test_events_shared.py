"""Core and events.k8s.io Events are one store read in two shapes, as upstream."""

from __future__ import annotations

from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import EVENTS, EVENTS_V1

from tests.helpers import kubectl


def test_event_written_through_events_api_reads_back_through_core(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    target = client.create(ResourceRef("", "v1", "configmaps"), {"metadata": {"name": "target"}}, kube_namespace)
    event = client.create(EVENTS_V1, {
        "metadata": {"name": "e1"}, "eventTime": "2026-11-22T02:00:00.000000Z", "reason": "Tested",
        "note": "hello from events.k8s.io", "type": "Normal", "action": "Test",
        "reportingController": "example.com/tester", "reportingInstance": "tester-1",
        "regarding": {"kind": "ConfigMap", "name": "target", "namespace": kube_namespace, "apiVersion": "v1",
                      "uid": target["metadata"]["uid"]},
    }, kube_namespace)
    assert event["apiVersion"] == "events.k8s.io/v1" and event["note"] == "hello from events.k8s.io"
    core = client.get(EVENTS, "e1", kube_namespace)
    assert core["apiVersion"] == "v1"
    assert core["message"] == "hello from events.k8s.io"
    assert core["involvedObject"]["name"] == "target" and core["reportingComponent"] == "example.com/tester"
    listed = client.list(EVENTS, kube_namespace, fieldSelector="involvedObject.name=target")
    assert [e["metadata"]["name"] for e in listed["items"]] == ["e1"]
    described = kubectl(mini_kube_session, "describe", "configmap", "target", "-n", kube_namespace).stdout
    assert "hello from events.k8s.io" in described
    patched = client.patch(EVENTS_V1, "e1", {"series": {"count": 2, "lastObservedTime": "2026-11-22T02:05:00.000000Z"}},
                           kube_namespace)
    assert patched["series"]["count"] == 2 and patched["note"] == "hello from events.k8s.io"
    assert client.get(EVENTS, "e1", kube_namespace)["series"]["count"] == 2


def test_core_event_reads_through_events_api(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(EVENTS, {
        "metadata": {"name": "e2"}, "reason": "Old", "message": "from core", "type": "Warning", "count": 2,
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": kube_namespace},
        "source": {"component": "kubelet"}, "firstTimestamp": "2026-11-22T02:00:00Z",
        "lastTimestamp": "2026-11-22T02:01:00Z",
    }, kube_namespace)
    as_v1 = client.get(EVENTS_V1, "e2", kube_namespace)
    assert as_v1["apiVersion"] == "events.k8s.io/v1"
    assert as_v1["note"] == "from core" and as_v1["regarding"]["name"] == "p"
    assert as_v1["deprecatedCount"] == 2 and as_v1["deprecatedSource"] == {"component": "kubelet"}
    client.patch(EVENTS, "e2", {"message": "patched", "count": 3}, kube_namespace)
    again = client.get(EVENTS_V1, "e2", kube_namespace)
    assert again["note"] == "patched" and again["deprecatedCount"] == 3
    watched = client.list(EVENTS_V1, kube_namespace)
    assert [(e["apiVersion"], e["note"]) for e in watched["items"]] == [("events.k8s.io/v1", "patched")]


def test_events_api_field_selectors_use_its_own_field_names(mini_kube_session, kube_namespace):
    """events.k8s.io/v1 selects on regarding.*, reportingController, reason and type (mapped onto the core
    fields the store holds); the core names are not its labels (upstream's AddFieldLabelConversionsForEvent)."""
    client = mini_kube_session.client
    for name, target, kind in (("s1", "a", "Warning"), ("s2", "b", "Normal")):
        client.create(EVENTS, {"metadata": {"name": name}, "reason": "Sel", "message": name, "type": kind,
                             "reportingComponent": "example.com/sel", "reportingInstance": "i",
                             "involvedObject": {"kind": "Pod", "name": target, "namespace": kube_namespace}},
                      kube_namespace)
    out = kubectl(mini_kube_session, "-n", kube_namespace, "get", "events.v1.events.k8s.io", "-o", "name",
                  "--field-selector", "regarding.name=a,reportingController=example.com/sel").stdout
    assert out.split() == ["event.events.k8s.io/s1"]
    warnings = client.list(EVENTS_V1, kube_namespace, fieldSelector="type=Warning,regarding.kind=Pod")
    assert [e["metadata"]["name"] for e in warnings["items"]] == ["s1"]
    refused = kubectl(mini_kube_session, "-n", kube_namespace, "get", "events.v1.events.k8s.io",
                      "--field-selector", "involvedObject.name=a", check=False)
    assert refused.returncode != 0 and "field label not supported: involvedObject.name" in refused.stderr


def test_core_source_field_falls_back_to_the_reporting_controller(mini_kube_session, kube_namespace):
    """The core `source` field label is source.component, or reportingController when an Event has no source (one
    written through events.k8s.io): upstream's event ToSelectableFields."""
    client = mini_kube_session.client
    client.create(EVENTS_V1, {
        "metadata": {"name": "new-style"}, "eventTime": "2026-11-22T02:00:00.000000Z", "reason": "Test",
        "note": "n", "type": "Normal", "action": "Do", "reportingController": "example.com/src",
        "reportingInstance": "i", "regarding": {"namespace": kube_namespace}}, kube_namespace)
    client.create(EVENTS, {"metadata": {"name": "old-style"}, "reason": "Old", "message": "m", "type": "Normal",
                           "involvedObject": {"kind": "Pod", "name": "p", "namespace": kube_namespace},
                           "source": {"component": "example.com/src"}}, kube_namespace)
    client.create(EVENTS, {"metadata": {"name": "other"}, "reason": "Old", "message": "m", "type": "Normal",
                           "involvedObject": {"kind": "Pod", "name": "p", "namespace": kube_namespace},
                           "source": {"component": "kubelet"}, "reportingComponent": "example.com/src"},
                  kube_namespace)
    out = kubectl(mini_kube_session, "-n", kube_namespace, "get", "events", "-o", "name",
                  "--field-selector", "source=example.com/src").stdout
    assert sorted(out.split()) == ["event/new-style", "event/old-style"]
