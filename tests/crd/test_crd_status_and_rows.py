"""What the server fills into a CRD (defaults, status) and the resource rows it serves."""

from __future__ import annotations

import copy
from typing import Any

from mini_kube.apiserver.crd.lifecycle import (
    CLEANUP_FINALIZER,
    cleanup_finished,
    cleanup_started,
    mark_for_deletion,
)
from mini_kube.apiserver.crd.printers import TablePrinter
from mini_kube.apiserver.crd.rows import resource_rows, version_priority
from mini_kube.apiserver.crd.validation import crd_defaults, crd_status, validate_crd
from mini_kube.apiserver.registry.kinds import custom_resources
from mini_kube.apiserver.registry.strategies.custom import CustomResourceStrategy

NOW = "2026-11-22T02:21:02Z"


def test_defaults_match_what_the_server_returns() -> None:
    crd = {"spec": {"group": "pb.example.com", "scope": "Namespaced", "names": {"plural": "gadgets", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True}]}}
    crd_defaults(crd)
    assert crd["spec"]["names"] == {"plural": "gadgets", "kind": "Gadget", "singular": "gadget", "listKind": "GadgetList"}
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_webhook_service_port_defaults_to_443() -> None:
    crd = {"spec": {"names": {"kind": "A"}, "conversion": {"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"name": "s", "namespace": "n"}}, "conversionReviewVersions": ["v1"]}}}}
    crd_defaults(crd)
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443


def test_status_conditions_as_the_reference_server_sets_them(agent_crd: dict[str, Any]) -> None:
    crd_defaults(agent_crd)
    status = crd_status(agent_crd, now=NOW)
    assert status == {
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": NOW, "reason": "NoConflicts",
             "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": NOW, "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted"},
        ],
        "acceptedNames": {"plural": "agents", "singular": "agent", "shortNames": ["ag"], "kind": "Agent",
                          "listKind": "AgentList"},
        "storedVersions": ["v1"],
    }
    assert "status" not in agent_crd  # the input is left alone


def test_conflicting_names_are_not_accepted(agent_crd: dict[str, Any]) -> None:
    crd_defaults(agent_crd)
    other = copy.deepcopy(agent_crd)
    other["metadata"]["name"] = "bots.example.com"
    other["status"] = {"acceptedNames": {"plural": "bots", "singular": "bot", "shortNames": ["ag"], "kind": "Agent",
                                         "listKind": "BotList"}}
    status = crd_status(agent_crd, others=[other], now=NOW)
    names, established = status["conditions"]
    assert names["status"] == "False"
    assert (names["reason"], names["message"]) == ("KindConflict", '"Agent" is already in use')
    assert established == {"type": "Established", "status": "False", "lastTransitionTime": NOW,
                           "reason": "NotAccepted", "message": "not all names are accepted"}
    assert status["acceptedNames"] == {"plural": "agents", "singular": "agent", "listKind": "AgentList"}
    other["spec"]["group"] = "other.example.com"  # other groups never conflict
    assert crd_status(agent_crd, others=[other], now=NOW)["conditions"][0]["reason"] == "NoConflicts"


def test_transition_time_kept_while_status_unchanged(agent_crd: dict[str, Any]) -> None:
    crd_defaults(agent_crd)
    agent_crd["status"] = crd_status(agent_crd, now=NOW)
    agent_crd["spec"]["names"]["shortNames"] = ["ag", "agt"]
    status = crd_status(agent_crd, now="2030-01-01T00:00:00Z")
    assert [c["lastTransitionTime"] for c in status["conditions"]] == [NOW, NOW]
    assert status["acceptedNames"]["shortNames"] == ["ag", "agt"]


def test_rows_one_per_served_version(agent_crd: dict[str, Any]) -> None:
    v2 = copy.deepcopy(agent_crd["spec"]["versions"][0])
    v2.update(name="v2", storage=False, subresources={"status": {}, "scale": {
        "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}})
    v2["selectableFields"] = [{"jsonPath": ".spec.model"}]
    off = copy.deepcopy(v2)
    off.update(name="v3", served=False)
    agent_crd["spec"]["versions"] += [v2, off]
    agent_crd["spec"]["names"]["categories"] = ["all"]
    crd_defaults(agent_crd)
    agent_crd["status"] = crd_status(agent_crd, now=NOW)
    rows = resource_rows(agent_crd)
    assert [(r.group, r.version, r.kind, r.plural, r.namespaced) for r in rows] == [
        ("example.com", "v1", "Agent", "agents", True), ("example.com", "v2", "Agent", "agents", True)]
    v1, v2row = rows
    assert v1.short_names == ("ag",) and v1.categories == ("all",)
    assert v1.singular == "agent" and v1.list_kind == "AgentList"
    assert v1.storage_version == v2row.storage_version == "v1"
    assert v1.extra["storage"] and not v2row.extra["storage"]
    assert [s.name for s in v1.subresources] == ["status"]
    assert [(s.name, s.kind, s.group, s.version) for s in v2row.subresources] == [
        ("status", "Agent", "", ""), ("scale", "Scale", "autoscaling", "v1")]
    assert v2row.selectable_fields == (".spec.model",)
    assert v1.schema["properties"]["spec"]["required"] == ["model"]
    assert [c["name"] for c in v1.printer_columns] == ["Model", "Replicas", "Phase", "Age"]
    assert v1.crd is agent_crd
    assert v1.key("demo", "a1") == v2row.key("demo", "a1")  # versions share storage


def test_rows_use_accepted_names(agent_crd: dict[str, Any]) -> None:
    crd_defaults(agent_crd)
    assert resource_rows(agent_crd)[0].plural == "agents"  # no status yet: requested names
    agent_crd["status"] = {"acceptedNames": {"plural": "agents", "singular": "agent", "kind": "Agent",
                                             "listKind": "AgentList"}}
    assert resource_rows(agent_crd)[0].short_names == ()  # the short name was not accepted


def test_deletion_goes_through_the_cleanup_finalizer(agent_crd: dict[str, Any]) -> None:
    crd_defaults(agent_crd)
    agent_crd["status"] = crd_status(agent_crd, now=NOW)
    mark_for_deletion(agent_crd, now="2026-11-22T03:00:00Z")
    assert agent_crd["metadata"]["deletionTimestamp"] == "2026-11-22T03:00:00Z"
    assert agent_crd["metadata"]["finalizers"] == [CLEANUP_FINALIZER]
    terminating = agent_crd["status"]["conditions"][-1]
    assert (terminating["type"], terminating["status"], terminating["reason"]) == (
        "Terminating", "True", "InstanceDeletionPending")
    cleanup_started(agent_crd, now="2026-11-22T03:00:01Z")
    assert agent_crd["status"]["conditions"][-1]["reason"] == "InstanceDeletionInProgress"
    assert agent_crd["status"]["conditions"][-1]["lastTransitionTime"] == "2026-11-22T03:00:00Z"
    cleanup_finished(agent_crd, now="2026-11-22T03:00:02Z")
    assert "finalizers" not in agent_crd["metadata"]
    assert agent_crd["status"]["conditions"][-1] == {
        "type": "Terminating", "status": "False", "lastTransitionTime": "2026-11-22T03:00:02Z",
        "reason": "InstanceDeletionCompleted", "message": "removed all instances"}


def test_version_priority_orders_like_discovery(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["versions"] = [{"name": n} for n in ("v1alpha1", "foo", "v2beta1", "v1", "v10", "bar", "v2beta2")]
    assert version_priority(agent_crd) == ["v10", "v1", "v2beta2", "v2beta1", "v1alpha1", "bar", "foo"]


def test_rows_carry_compiled_schema_validator_strategy_and_printer(agent_crd: dict[str, Any]) -> None:
    crd_defaults(agent_crd)
    row = custom_resources(agent_crd)[0]
    obj = {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "a"},
           "spec": {"model": "small", "junk": 1}}
    assert row.object_schema is not None
    assert row.object_schema.unknown_fields(obj) == ["spec.junk"]
    assert obj["spec"]["junk"] == 1  # unknown_fields does not prune
    assert row.object_schema.decode(obj) == ["spec.junk"]
    assert obj["spec"] == {"model": "small", "replicas": 1}
    assert row.extra["version_priority"] == ["v1"]
    assert isinstance(row.printer, TablePrinter)
    assert [d["name"] for d in row.printer.definitions] == ["Name", "Model", "Replicas", "Phase", "Age"]
    assert isinstance(row.strategy, CustomResourceStrategy)
    assert row.validator is not None
    bad = {**obj, "spec": {"model": "small", "replicas": "x"}}
    assert [e.field for e in row.validator.errors(bad, None)] == ["spec.replicas"]


def test_gadget_crd_defaults_and_status_as_returned_by_the_reference_server() -> None:
    sent = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.pb.example.com"},
            "spec": {"group": "pb.example.com", "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget"},
                     "scope": "Namespaced", "versions": [{
                         "additionalPrinterColumns": [{"jsonPath": ".spec.size", "name": "Size", "type": "integer"}],
                         "name": "v1", "served": True, "storage": True,
                         "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                             "type": "object", "properties": {
                                 "mode": {"enum": ["a", "b"], "type": "string"},
                                 "size": {"default": 2, "minimum": 1, "type": "integer"}}}}}}}]}}
    crd_defaults(sent)
    assert sent["spec"]["names"] == {"kind": "Gadget", "plural": "gadgets", "singular": "gadget",
                                     "listKind": "GadgetList"}
    assert sent["spec"]["conversion"] == {"strategy": "None"}
    assert validate_crd(sent) == []
    assert crd_status(sent, now="2026-11-22T02:21:02Z")["acceptedNames"] == {
        "plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"}
