"""The exec WebSocket protocols' error channel (upstream's remotecommand): what a client reads there depends on
the subprotocol it negotiated."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, status_of


@pytest.mark.parametrize(("protocol", "command", "error"), [
    ("channel.k8s.io", ["echo", "remote execution test"], []),
    ("channel.k8s.io", ["false"], [b"command terminated with non-zero exit code: error executing command [false], "
                                   b"exit code 1"]),
    ("v4.channel.k8s.io", ["echo", "remote execution test"], [b'{"metadata": {}, "status": "Success"}']),
])
def test_the_error_channel_carries_the_status_as_the_protocol_says(process_cluster, protocol, command, error):
    """channel.k8s.io (v1 to v3): the error channel says nothing on success and the message as text on failure;
    v4 and v5 the Status as JSON (the suite's websocket exec test reads the old protocol)."""
    import websockets.sync.client

    kube, ns = process_cluster, new_namespace(process_cluster)
    kubectl(kube, "-n", ns, "run", "--image=busybox", "ws", "--", "sleep", "600")
    eventually(lambda: status_of(kube, ns, "ws").get("phase") == "Running")
    query = "&".join(["stdout=1", "stderr=1", "container=ws", *(f"command={quote(c)}" for c in command)])
    url = kube.url.replace("http", "ws", 1) + f"/api/v1/namespaces/{ns}/pods/ws/exec?{query}"
    stdout, errors = b"", []
    with websockets.sync.client.connect(url, subprotocols=[protocol]) as ws:
        for message in ws:
            data = message if isinstance(message, bytes) else message.encode()
            if data[:1] == b"\x01":
                stdout += data[1:]
            elif data[:1] == b"\x03" and len(data) > 1:
                errors.append(data[1:])
    assert stdout == (b"remote execution test\n" if command[0] == "echo" else b"")
    assert errors == error
