"""Apply patches sent as JSON (as kubectl and controllers send them) are decoded as JSON, not through the YAML
parser, with the same result; a JSON body with a repeated key still takes the YAML path and its wording."""

from __future__ import annotations

import pytest
from mini_kube.apiserver.http.negotiation import decode_yaml, plain_json
from mini_kube.client import ApiError
from mini_kube.machinery.refs import CONFIGMAPS


def test_plain_json_decodes_only_json_without_repeated_keys():
    assert plain_json(b' {"a": [1, 2.5, "x", null, true], "b": {"c": "1e3"}}') == {
        "a": [1, 2.5, "x", None, True], "b": {"c": "1e3"}}
    assert plain_json(b'{"a": 1, "a": 2}') is None  # the YAML path reports the repeated key
    assert plain_json(b'{"a": NaN}') is None
    assert plain_json(b"a: 1\n") is None and plain_json(b"{a: 1}") is None  # YAML flow style
    assert decode_yaml(b'{"a": 1, "a": 2}') == {"a": 2} and decode_yaml(b"{a: 1}") == {"a": 1}


def test_a_repeated_key_in_a_json_apply_is_still_reported(mini_kube):
    body = b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dup"}, "data": {"k": "1", "k": "2"}}'
    with pytest.raises(ApiError) as failure:
        mini_kube.client.request("PATCH", CONFIGMAPS.path("default", "dup"), body=body,
                                 content_type="application/apply-patch+yaml",
                                 params={"fieldManager": "m", "fieldValidation": "Strict"})
    assert 'key "k" already set in map' in failure.value.body["message"]
    applied = mini_kube.client.request("PATCH", CONFIGMAPS.path("default", "dup"), body=body.replace(b'"k": "2"', b'"j": "2"'),
                                       content_type="application/apply-patch+yaml", params={"fieldManager": "m"})
    assert applied["data"] == {"k": "1", "j": "2"}
