"""pods/log over a WebSocket, as upstream's API server serves it (wsstream.Reader): binary frames with
`binary.k8s.io` or no protocol, base64 text frames with `base64.binary.k8s.io`, an empty first message, then the
log and a close; an offer of only unknown protocols is refused."""

from __future__ import annotations

import base64

import pytest
import websockets.sync.client
from websockets.exceptions import InvalidStatus

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, pod_log, status_of


@pytest.fixture(scope="module")
def running(process_cluster):
    kube, ns = process_cluster, new_namespace(process_cluster)
    kubectl(kube, "-n", ns, "run", "--image=busybox", "talker", "--", "sh", "-c", "echo container is alive; sleep 600")
    eventually(lambda: status_of(kube, ns, "talker").get("phase") == "Running")
    eventually(lambda: pod_log(kube, ns, "talker"))
    url = kube.url.replace("http", "ws", 1) + f"/api/v1/namespaces/{ns}/pods/talker/log?container=talker"
    return url


def _messages(url: str, protocols: list[str] | None) -> tuple[str | None, list[bytes | str]]:
    with websockets.sync.client.connect(url, subprotocols=protocols) as ws:
        return ws.subprotocol, list(ws)


@pytest.mark.parametrize("protocols", [["binary.k8s.io"], None, ["v4.channel.k8s.io", "binary.k8s.io"]])
def test_binary_frames(running, protocols):
    protocol, messages = _messages(running, protocols)
    assert protocol == ("binary.k8s.io" if protocols else None)
    assert messages[0] == b"" and all(isinstance(m, bytes) for m in messages)
    assert b"".join(messages) == b"container is alive\n"  # type: ignore[arg-type]


def test_base64_text_frames(running):
    protocol, messages = _messages(running, ["base64.binary.k8s.io"])
    assert protocol == "base64.binary.k8s.io"
    assert messages[0] == "" and all(isinstance(m, str) for m in messages)
    assert b"".join(base64.b64decode(m) for m in messages) == b"container is alive\n"


def test_unknown_protocols_are_refused(running):
    with pytest.raises(InvalidStatus) as refused:
        _messages(running, ["v4.channel.k8s.io"])
    assert refused.value.response.status_code == 403
