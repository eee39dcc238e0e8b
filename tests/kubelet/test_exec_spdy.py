"""exec over raw SPDY/3.1 (client-go's SPDY executor, which the e2e framework's exec uses): real kubectl told not
to use WebSockets upgrades its request to SPDY/3.1 and reads stdout, stderr and the exit code from SPDY streams,
and writes stdin to one."""

from __future__ import annotations

import pytest

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, status_of

SPDY = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false"}


@pytest.fixture
def running_pod(process_cluster):
    kube, ns = process_cluster, new_namespace(process_cluster)
    kubectl(kube, "-n", ns, "run", "--image=busybox", "box", "--", "sleep", "600")
    eventually(lambda: status_of(kube, ns, "box").get("phase") == "Running")
    return kube, ns


@pytest.mark.slow
def test_stdout_stderr_and_exit_code_over_spdy(running_pod):
    kube, ns = running_pod
    result = kubectl(kube, "-n", ns, "exec", "box", "-v=8", "--", "sh", "-c", "echo out; echo err >&2; exit 3",
                     check=False, env=SPDY)
    assert "Upgrade: SPDY/3.1" in result.stderr and "X-Stream-Protocol-Version: v4.channel.k8s.io" in result.stderr
    assert result.stdout == "out\n"
    assert "err\n" in result.stderr
    assert "command terminated with exit code 3" in result.stderr
    assert result.returncode == 3


def test_stdin_over_spdy(running_pod):
    kube, ns = running_pod
    result = kubectl(kube, "-n", ns, "exec", "-i", "box", "--", "sh", "-c", "tr a-z A-Z", input="hello spdy\n",
                     env=SPDY)
    assert result.stdout == "HELLO SPDY\n"


def test_a_successful_command_exits_zero_over_spdy(running_pod):
    kube, ns = running_pod
    result = kubectl(kube, "-n", ns, "exec", "box", "--", "echo", "remote execution test", env=SPDY)
    assert result.stdout == "remote execution test\n"
    assert result.returncode == 0


def test_attach_over_spdy(process_cluster):
    kube, ns = process_cluster, new_namespace(process_cluster)
    kubectl(kube, "-n", ns, "run", "--image=busybox", "-i", "--attach=false", "--restart=Never", "reader",
            "--command", "--", "sh", "-c", "read line; echo got $line")
    eventually(lambda: status_of(kube, ns, "reader").get("phase") == "Running")
    result = kubectl(kube, "-n", ns, "attach", "-i", "reader", input="spdy\n", env=SPDY)
    assert "got spdy" in result.stdout
