"""Label selectors, one implementation (machinery.labels) behind the list and watch `labelSelector` parameter and
Scale's `status.selector`: set-based selectors select, bad ones are 400 BadRequest with upstream's wording, and a
Scale shows its selector as upstream's `LabelSelectorAsSelector(...).String()` does (requirements by key)."""

from __future__ import annotations

import pytest
from mini_kube.client import ApiError
from mini_kube.machinery.refs import CONFIGMAPS, DEPLOYMENTS


def _names(client, namespace: str, selector: str) -> list[str]:
    listed = client.list(CONFIGMAPS, namespace, labelSelector=selector)
    return sorted(item["metadata"]["name"] for item in listed["items"])


def test_set_based_and_numeric_selectors_select(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    for name, labels in (("s1", {"tier": "a", "n": "3"}), ("s2", {"tier": "b", "n": "7"}), ("s3", {})):
        client.create(CONFIGMAPS, {"metadata": {"name": name, "labels": labels}}, kube_namespace)
    assert _names(client, kube_namespace, "tier in (a, b)") == ["s1", "s2"]
    assert _names(client, kube_namespace, "tier notin (a)") == ["s2", "s3"]
    assert _names(client, kube_namespace, "!tier") == ["s3"]
    assert _names(client, kube_namespace, "tier,n>4") == ["s2"]
    assert _names(client, kube_namespace, "tier!=a,n<4") == []


@pytest.mark.parametrize(("selector", "message"), [
    ("a,", "unable to parse requirement: found '', expected: identifier"),
    ("!a=b", "unable to parse requirement: '!a=b'"),
    ("a=(b", "unable to parse requirement: invalid label selector: 'a=(b'"),
    ("a" * 64, f'unable to parse requirement: <nil>: Invalid value: "{"a" * 64}": name part must be no more than '
               "63 characters"),
    ("a=" + "b" * 64, f'unable to parse requirement: <nil>: Invalid value: "{"b" * 64}": must be no more than 63 '
                      "characters"),
])
@pytest.mark.parametrize("watch", [False, True])
def test_bad_selectors_are_bad_requests(mini_kube_session, kube_namespace, selector, message, watch):
    params = {"labelSelector": selector, **({"watch": "true", "timeoutSeconds": "1"} if watch else {})}
    with pytest.raises(ApiError) as err:
        mini_kube_session.client.request("GET", CONFIGMAPS.path(kube_namespace), params=params)
    assert err.value.status == 400 and err.value.reason == "BadRequest"
    assert err.value.body["message"].startswith(message)


def test_scale_selector_is_the_selector_string_by_key(mini_kube_session, kube_namespace):
    labels = {"a-b": "1", "a": "2", "c": "3"}
    selector = {"matchLabels": {"a-b": "1", "a": "2"},
                "matchExpressions": [{"key": "c", "operator": "In", "values": ["3", "1", "3"]},
                                     {"key": "b", "operator": "DoesNotExist"}]}
    client = mini_kube_session.client
    client.create(DEPLOYMENTS, {"metadata": {"name": "sel"}, "spec": {
        "replicas": 0, "selector": selector, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "c", "image": "nginx"}]}}}}, kube_namespace)
    scale = client.request("GET", DEPLOYMENTS.path(kube_namespace, "sel") + "/scale")
    assert scale["status"]["selector"] == "a=2,a-b=1,!b,c in (1,3)"
