"""Container lifecycle hooks with real processes: postStart runs in the container before it counts as running
(a failure is FailedPostStartHook and a restart), preStop runs on deletion before SIGTERM (its failure is
FailedPreStopHook and SIGTERM follows anyway; a sleep holds SIGTERM back). On the simulated runtime exec hooks
succeed at once and sleep is honoured."""

from __future__ import annotations

from mini_kube.machinery.refs import EVENTS, PODS

from tests.helpers import kubectl

from .conftest import container_state, eventually, gone, new_namespace, pod, pod_log, status_of


def events(kube, ns: str, name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e.get("message", "")) for e in kube.client.list(EVENTS, ns)["items"]
            if e["involvedObject"]["name"] == name]


def running(kube, ns: str, name: str) -> bool:
    status = status_of(kube, ns, name)
    return status.get("phase") == "Running" and all(c.get("ready") for c in status.get("containerStatuses") or [{}])


def shared(tmp_path) -> dict:
    """A hostPath volume the test reads after the Pod is gone."""
    tmp_path.chmod(0o777)
    return {"name": "shared", "hostPath": {"path": str(tmp_path)}}


MOUNT = [{"name": "shared", "mountPath": "/shared"}]


def test_post_start_runs_before_the_main_command_counts(process_cluster):
    kube = process_cluster
    ns = new_namespace(kube)
    main = {"name": "main", "image": "busybox",
            "command": ["sh", "-c", "until [ -f /data/hello ]; do sleep 0.05; done; cat /data/hello; sleep 3600"],
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            "lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "echo hello from postStart > /data/hello"]}}}}
    kube.client.create(PODS, pod("post", main, volumes=[{"name": "data", "emptyDir": {}}]), ns)
    eventually(lambda: running(kube, ns, "post"))
    eventually(lambda: "hello from postStart" in pod_log(kube, ns, "post"))
    assert "hello from postStart" in kubectl(kube, "-n", ns, "logs", "post").stdout
    reasons = [e[1] for e in events(kube, ns, "post")]
    assert "FailedPostStartHook" not in reasons


def test_a_failing_post_start_kills_and_restarts(process_cluster):
    kube = process_cluster
    ns = new_namespace(kube)
    main = {"name": "main", "image": "busybox", "command": ["sleep", "3600"],
            "lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "exit 3"]}}}}
    kube.client.create(PODS, pod("badpost", main, terminationGracePeriodSeconds=1), ns)
    eventually(lambda: container_state(kube, ns, "badpost").get("restartCount", 0) >= 1)
    eventually(lambda: ("Warning", "FailedPostStartHook", "PostStartHook failed") in events(kube, ns, "badpost"))
    assert ("Normal", "Killing", "FailedPostStartHook") in events(kube, ns, "badpost")
    state = container_state(kube, ns, "badpost")
    assert "terminated" in state["lastState"] and not state["ready"]
    assert "running" not in state["state"] or not state["started"]


def test_pre_stop_exec_runs_before_sigterm(process_cluster, tmp_path):
    kube = process_cluster
    ns = new_namespace(kube)
    main = {"name": "main", "image": "busybox", "volumeMounts": MOUNT,
            "command": ["sh", "-c", "trap 'echo term >> /shared/log; exit 0' TERM; while true; do sleep 0.05; done"],
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "echo preStop >> /shared/log"]}}}}
    kube.client.create(PODS, pod("pre", main, volumes=[shared(tmp_path)]), ns)
    eventually(lambda: running(kube, ns, "pre"))
    kubectl(kube, "-n", ns, "delete", "pod", "pre", "--timeout=20s")
    assert (tmp_path / "log").read_text().split() == ["preStop", "term"]


def test_a_failing_pre_stop_is_an_event_and_sigterm_follows(process_cluster, tmp_path):
    kube = process_cluster
    ns = new_namespace(kube)
    main = {"name": "main", "image": "busybox", "volumeMounts": MOUNT,
            "command": ["sh", "-c", "trap 'echo term >> /shared/log; exit 0' TERM; while true; do sleep 0.05; done"],
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "exit 7"]}}}}
    kube.client.create(PODS, pod("badpre", main, volumes=[shared(tmp_path)]), ns)
    eventually(lambda: running(kube, ns, "badpre"))
    kubectl(kube, "-n", ns, "delete", "pod", "badpre", "--wait=false")
    eventually(lambda: (tmp_path / "log").exists() and "term" in (tmp_path / "log").read_text())
    failed = [e for e in events(kube, ns, "badpre") if e[1] == "FailedPreStopHook"]
    assert failed and failed[0][0] == "Warning"
    assert "exited with 7" in failed[0][2] and 'for Container "main"' in failed[0][2]
    eventually(lambda: gone(kube, ns, "badpre"))


def test_pre_stop_sleep_holds_sigterm_back(process_cluster, tmp_path):
    kube = process_cluster
    ns = new_namespace(kube)
    main = {"name": "main", "image": "busybox", "volumeMounts": MOUNT,
            "command": ["sh", "-c", "trap 'echo term >> /shared/log; exit 0' TERM; while true; do sleep 0.05; done"],
            "lifecycle": {"preStop": {"sleep": {"seconds": 2}}}}
    kube.client.create(PODS, pod("sleepy", main, volumes=[shared(tmp_path)]), ns)
    eventually(lambda: running(kube, ns, "sleepy"))
    kubectl(kube, "-n", ns, "delete", "pod", "sleepy", "--wait=false")
    eventually(lambda: ("Normal", "Killing", "Stopping container main") in events(kube, ns, "sleepy"))
    assert not (tmp_path / "log").exists()  # the Pod is being stopped, but the sleep comes before SIGTERM
    eventually(lambda: gone(kube, ns, "sleepy"))
    assert (tmp_path / "log").read_text().split() == ["term"]


def test_hooks_on_the_simulated_runtime(simulated_cluster):
    kube = simulated_cluster
    ns = new_namespace(kube)
    node = kube.nodes.kubelets[0].name
    main = {"name": "main", "image": "nginx",
            "lifecycle": {"postStart": {"sleep": {"seconds": 2}}, "preStop": {"sleep": {"seconds": 2}}}}
    side = {"name": "side", "image": "nginx", "lifecycle": {"postStart": {"exec": {"command": ["false"]}}}}
    kube.client.create(PODS, pod("simhooks", main, side, node=node), ns)
    eventually(lambda: ("Normal", "Started", "Started container main") in events(kube, ns, "simhooks"))
    assert "running" not in container_state(kube, ns, "simhooks", "main").get("state", {})  # postStart is sleeping
    eventually(lambda: running(kube, ns, "simhooks"))
    kube.client.delete(PODS, "simhooks", ns)
    eventually(lambda: ("Normal", "Killing", "Stopping container main") in events(kube, ns, "simhooks"))
    assert "running" in container_state(kube, ns, "simhooks", "main")["state"]  # preStop is sleeping: no SIGTERM yet
    eventually(lambda: gone(kube, ns, "simhooks"))
    assert "FailedPostStartHook" not in [e[1] for e in events(kube, ns, "simhooks")]


def test_pre_stop_http_get_reaches_another_pod(process_cluster):
    kube = process_cluster
    ns = new_namespace(kube)
    kube.client.create(PODS, pod("sink", {"name": "web", "image": "nginx"}), ns)
    eventually(lambda: running(kube, ns, "sink"))
    sink_ip = status_of(kube, ns, "sink")["podIP"]
    caller = {"name": "main", "image": "busybox", "command": ["sleep", "3600"],
              "lifecycle": {"preStop": {"httpGet": {"host": sink_ip, "port": 80, "path": "/from-prestop"}}}}
    kube.client.create(PODS, pod("caller", caller, terminationGracePeriodSeconds=5), ns)
    eventually(lambda: running(kube, ns, "caller"))
    kubectl(kube, "-n", ns, "delete", "pod", "caller", "--timeout=20s")
    eventually(lambda: "/from-prestop" in pod_log(kube, ns, "sink"))
    assert "/from-prestop" in kubectl(kube, "-n", ns, "logs", "sink").stdout
    assert "FailedPreStopHook" not in [e[1] for e in events(kube, ns, "caller")]
