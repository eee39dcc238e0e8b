"""What a user reads from a running Pod, as a real cluster shows it: a last log line without its newline is shown
(`printf abc; sleep 1000` logs `abc`), and a failed exec or probe is said in the runtime's words (`exec: "/x":
stat /x: no such file or directory`), never nsenter's."""

from __future__ import annotations

import json

from mini_kube.client import ResourceRef

from tests.helpers import kubectl

from .conftest import eventually, pod_log

PODS = ResourceRef("", "v1", "pods")
EVENTS = ResourceRef("", "v1", "events")


def _pod(name: str, *containers: dict, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": "mini-kube", "containers": list(containers), **spec}}


def _running(kube, ns: str, name: str) -> None:
    eventually(lambda: (kube.client.get(PODS, name, ns).get("status") or {}).get("phase") == "Running")


def test_a_last_line_without_newline_is_logged(process_cluster, process_namespace):
    kube, ns = process_cluster, process_namespace
    kube.client.create(PODS, _pod("partial", {"name": "c", "image": "busybox",
                                              "command": ["sh", "-c", "printf abc; sleep 1000"]},
                                  terminationGracePeriodSeconds=0), ns)
    eventually(lambda: pod_log(kube, ns, "partial") == "abc")
    assert kubectl(kube, "-n", ns, "logs", "partial").stdout == "abc"
    kube.client.create(PODS, _pod("lines", {"name": "c", "image": "busybox", "command": [
        "sh", "-c", "printf 'one\\ntw'; sleep 0.5; printf 'o\\nthree'; sleep 1000"]},
        terminationGracePeriodSeconds=0), ns)
    eventually(lambda: pod_log(kube, ns, "lines") == "one\ntwo\nthree")
    assert kubectl(kube, "-n", ns, "logs", "lines").stdout == "one\ntwo\nthree"


def test_a_missing_command_is_said_as_the_runtime_says_it(process_cluster, process_namespace):
    kube, ns = process_cluster, process_namespace
    kube.client.create(PODS, _pod("p", {"name": "c", "image": "busybox", "command": ["sleep", "1000"]},
                                  terminationGracePeriodSeconds=0), ns)
    _running(kube, ns, "p")
    missing = kubectl(kube, "-n", ns, "exec", "p", "--", "/x", check=False)
    assert missing.returncode != 0
    assert 'exec: "/x": stat /x: no such file or directory' in missing.stderr and "nsenter" not in missing.stderr
    unknown = kubectl(kube, "-n", ns, "exec", "p", "--", "nosuchcommand", check=False)
    assert 'exec: "nosuchcommand": executable file not found in $PATH' in unknown.stderr, unknown.stderr
    assert "nsenter" not in unknown.stderr


def test_probes_of_a_terminating_pod_do_not_leak_nsenter(process_cluster, process_namespace):
    """One container ends at SIGTERM, the other holds the Pod terminating for its grace period: probes of the
    ended one never report nsenter's failure to enter it."""
    kube, ns = process_cluster, process_namespace
    quick = {"name": "quick", "image": "busybox", "command": ["sh", "-c", "trap 'exit 0' TERM; sleep 1000 & wait"],
             "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 1}}
    slow = {"name": "slow", "image": "busybox", "command": ["sh", "-c", "trap '' TERM; sleep 1000"]}
    kube.client.create(PODS, _pod("t", quick, slow, terminationGracePeriodSeconds=4), ns)
    eventually(lambda: all(s.get("ready") for s in (kube.client.get(PODS, "t", ns).get("status") or {}).get(
        "containerStatuses") or [{}]), timeout=60, explain=lambda: json.dumps(kube.client.get(PODS, "t", ns).get(
            "status"), indent=1))
    kubectl(kube, "-n", ns, "delete", "pod", "t", "--wait=true", "--timeout=30s")
    messages = [e.get("message") or "" for e in kube.client.list(EVENTS, ns)["items"]]
    assert not [m for m in messages if "nsenter" in m], json.dumps(messages, indent=1)
