"""Pods as real processes (issue #13): each in its own network namespace with an IP on the cluster bridge, its
volumes and environment in place, its status as the kubelet reports it; through real kubectl."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import CONFIGMAPS, PODS, SECRETS, SERVICES

from tests.helpers import kubectl

from .conftest import container_state, eventually, pod, pod_log, status_of

READY_ON_80 = {"tcpSocket": {"port": 80}, "periodSeconds": 1}




def run(kube, ns: str, name: str, script: str, **spec) -> None:
    kube.client.create(PODS, pod(name, {"name": "main", "image": "busybox", "command": ["sh", "-c", script]},
                                 **spec), ns)


def wait_running(kube, ns: str, name: str) -> dict:
    return eventually(lambda: (s := status_of(kube, ns, name)).get("phase") == "Running" and all(
        c.get("ready") for c in s.get("containerStatuses") or [{}]) and s)


def test_a_pod_runs_with_its_own_ip_and_node_address(kube, ns):
    run(kube, ns, "p", "sleep 300")
    status = wait_running(kube, ns, "p")
    node = kube.client.get(ResourceRef("", "v1", "nodes", namespaced=False), "mini-kube")
    address = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    assert status["podIP"].startswith("10.244.1.") and status["hostIP"] == address and address.startswith("127.")
    assert [c["type"] for c in status["conditions"]][:4] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"]
    state = container_state(kube, ns, "p")
    assert state["image"] == "docker.io/library/busybox:latest" and "running" in state["state"]
    # its own network namespace: the pod sees its IP on eth0, and its hostname is the pod's name
    out = kubectl(kube, "-n", ns, "exec", "p", "--", "sh", "-c", "hostname; cat /proc/net/fib_trie | grep -c 10.244.1")
    lines = out.stdout.split()
    assert lines[0] == "p" and int(lines[1]) >= 1
    # the host's own namespace has no address from the pod range
    host = subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True).stdout
    assert "10.244." not in host


def test_logs_with_tail_timestamps_previous_and_containers(kube, ns):
    run(kube, ns, "l", "for i in 1 2 3; do echo line $i; done; echo oops >&2; sleep 300")
    wait_running(kube, ns, "l")
    eventually(lambda: "oops" in pod_log(kube, ns, "l"))
    assert kubectl(kube, "-n", ns, "logs", "l").stdout == "line 1\nline 2\nline 3\noops\n"
    assert kubectl(kube, "-n", ns, "logs", "l", "--tail=2").stdout == "line 3\noops\n"
    stamped = kubectl(kube, "-n", ns, "logs", "l", "--tail=1", "--timestamps").stdout
    assert stamped.endswith(" oops\n") and stamped[:4].isdigit() and "T" in stamped.split()[0]
    raw = f"/api/v1/namespaces/{ns}/pods/l/log"
    # further back than a datetime reaches is the whole log (the kubelet's timedelta overflowed: a 500)
    assert kubectl(kube, "get", "--raw", f"{raw}?sinceSeconds=9223372036854775807").stdout.startswith("line 1\n")
    bad = kubectl(kube, "get", "--raw", f"{raw}?tailLines=x", check=False)  # was int() in the kubelet: a 500
    assert 'Error from server (BadRequest): strconv.ParseInt: parsing "x": invalid syntax' in bad.stderr
    previous = kubectl(kube, "-n", ns, "logs", "l", "--previous", check=False)
    assert previous.returncode != 0 and 'previous terminated container "main" in pod "l" not found' in previous.stderr
    two = pod("two", {"name": "a", "image": "busybox", "command": ["sh", "-c", "echo from-a; sleep 300"]},
              {"name": "b", "image": "busybox", "command": ["sh", "-c", "echo from-b; sleep 300"]})
    two["metadata"]["labels"] = {"app": "two"}
    kube.client.create(PODS, two, ns)
    wait_running(kube, ns, "two")
    eventually(lambda: pod_log(kube, ns, "two", "b") == "from-b\n")
    assert kubectl(kube, "-n", ns, "logs", "two", "-c", "b").stdout == "from-b\n"
    assert "from-a" in kubectl(kube, "-n", ns, "logs", "-l", "app=two", "--all-containers").stdout


def test_logs_follow_until_the_container_exits(kube, ns):
    run(kube, ns, "f", "for i in 1 2 3; do echo tick $i; sleep 0.2; done", restartPolicy="Never")
    eventually(lambda: status_of(kube, ns, "f").get("phase") in ("Running", "Succeeded"))
    followed = kubectl(kube, "-n", ns, "logs", "-f", "f")
    assert followed.stdout == "tick 1\ntick 2\ntick 3\n"


def test_exec_exit_codes_stdin_and_cp(kube, ns, tmp_path):
    run(kube, ns, "e", "sleep 300")
    wait_running(kube, ns, "e")
    ok = kubectl(kube, "-n", ns, "exec", "e", "--", "sh", "-c", "echo out; echo err >&2")
    assert ok.stdout == "out\n" and ok.stderr == "err\n"
    failed = kubectl(kube, "-n", ns, "exec", "e", "--", "sh", "-c", "exit 7", check=False)
    assert failed.returncode == 7 and "command terminated with exit code 7" in failed.stderr
    missing = kubectl(kube, "-n", ns, "exec", "e", "--", "no-such-command", check=False)
    assert missing.returncode != 0
    assert kubectl(kube, "-n", ns, "exec", "-i", "e", "--", "wc", "-c", input="x" * 100_000).stdout.strip() == "100000"
    source = tmp_path / "hello.txt"
    source.write_text("copied through exec and tar\n")
    kubectl(kube, "-n", ns, "cp", str(source), f"{ns}/e:/tmp/hello.txt")
    assert kubectl(kube, "-n", ns, "exec", "e", "--", "cat", "/tmp/hello.txt").stdout == source.read_text()
    back = tmp_path / "back.txt"
    kubectl(kube, "-n", ns, "cp", f"{ns}/e:/tmp/hello.txt", str(back))
    assert back.read_text() == source.read_text()


def test_exec_with_a_terminal_through_the_official_client(kube, ns):
    from kubernetes import client, config
    from kubernetes.stream import stream

    run(kube, ns, "t", "sleep 300")
    wait_running(kube, ns, "t")
    api = client.CoreV1Api(config.new_client_from_config(kube.kubeconfig))
    out = stream(api.connect_get_namespaced_pod_exec, "t", ns, command=["sh", "-c", "tty; echo $TERM-ok"],
                 stderr=True, stdin=False, stdout=True, tty=True)
    assert "/dev/pts/" in out and "-ok" in out
    plain = stream(api.connect_get_namespaced_pod_exec, "t", ns, command=["sh", "-c", "tty"], stderr=True,
                   stdin=False, stdout=True, tty=False)
    assert "not a tty" in plain


def test_stdin_written_as_text_by_the_official_client_reaches_the_shell(kube, ns):
    """The official Python client's own e2e (`test_pod_apis`, `test_pod_exec_close_channel`): `write_stdin` of a
    str sends a WebSocket text frame, which the kubelet dropped (only binary frames were read)."""
    from kubernetes import client, config
    from kubernetes.stream import stream

    run(kube, ns, "s", "sleep 300")
    wait_running(kube, ns, "s")
    api = client.CoreV1Api(config.new_client_from_config(kube.kubeconfig))
    resp = stream(api.connect_get_namespaced_pod_exec, "s", ns, command=["/bin/sh"], stderr=True, stdin=True,
                  stdout=True, tty=False, _preload_content=False)
    try:
        resp.write_stdin("echo test string 1\n")
        assert resp.readline_stdout(timeout=5) == "test string 1"
        resp.write_stdin(b"echo test string 2 >&2\n")
        assert resp.readline_stderr(timeout=5) == "test string 2"
        resp.write_stdin("exit 4\n")
        resp.update(timeout=5)
        assert eventually(lambda: (resp.update(timeout=1), resp.returncode)[1] == 4)
    finally:
        resp.close()


def test_the_official_clients_port_forward_ends_when_the_pod_closes(kube, ns):
    """The official Python client's e2e (`test_portforward_http`) runs `python` from image `python`; its
    port-forward (v4 WebSocket) reads an HTTP/1.0 answer to the end: the stream ends once the Pod's side has
    closed, as upstream's kubelet ends it (it stayed open before, so a read to EOF hung)."""
    from kubernetes import client, config
    from kubernetes.stream import portforward

    kube.client.create(PODS, pod("py", {"name": "c", "image": "python", "command": ["python", "-m", "http.server",
                                                                                     "80"],
                                        "readinessProbe": READY_ON_80}), ns)
    wait_running(kube, ns, "py")
    api = client.CoreV1Api(config.new_client_from_config(kube.kubeconfig))
    forward = portforward(api.connect_get_namespaced_pod_portforward, "py", ns, ports="80")
    sock = forward.socket(80)
    sock.settimeout(10)
    sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
    answer = b""
    while chunk := sock.recv(65536):  # TimeoutError before: the stream never ended
        answer += chunk
    assert answer.startswith(b"HTTP/1.0 200 OK") and b"Directory listing" in answer, answer[:200]
    sock.close()
    forward.close()


def test_volumes_and_environment(kube, ns):
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "cfg"}, "data": {"greeting": "hello", "mode": "fast"}}, ns)
    kube.client.create(SECRETS, {"metadata": {"name": "sec"}, "data": {
        "password": base64.b64encode(b"s3cret").decode()}}, ns)
    kube.client.create(SERVICES, {"metadata": {"name": "backend"}, "spec": {
        "ports": [{"port": 8080, "name": "http"}], "selector": {"app": "x"}}}, ns)
    script = ("cat /etc/cfg/greeting; echo; cat /etc/sec/password; echo; cat /etc/info/labels; echo; "
              "ls /var/run/secrets/kubernetes.io/serviceaccount; echo $GREETING $POD_NAME $POD_IP $PASSWORD; "
              "echo $BACKEND_SERVICE_HOST:$BACKEND_SERVICE_PORT $KUBERNETES_SERVICE_HOST; "
              "echo data > /scratch/file && cat /scratch/file; sleep 300")
    spec = pod("v", {"name": "main", "image": "busybox", "command": ["sh", "-c", script],
                     "env": [{"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "greeting"}}},
                             {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                             {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                             {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "password"}}}],
                     "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"},
                                      {"name": "sec", "mountPath": "/etc/sec", "readOnly": True},
                                      {"name": "info", "mountPath": "/etc/info"},
                                      {"name": "scratch", "mountPath": "/scratch"}]},
               volumes=[{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "sec", "secret": {"secretName": "sec"}},
                        {"name": "info", "downwardAPI": {"items": [{"path": "labels",
                                                                    "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                        {"name": "scratch", "emptyDir": {}}])
    spec["metadata"]["labels"] = {"tier": "web"}
    kube.client.create(PODS, spec, ns)
    ip = wait_running(kube, ns, "v")["podIP"]
    eventually(lambda: pod_log(kube, ns, "v").count("\n") >= 8)
    lines = kubectl(kube, "-n", ns, "logs", "v").stdout.splitlines()
    assert len(lines) >= 8
    assert lines[:3] == ["hello", "s3cret", 'tier="web"']
    assert lines[3:6] == ["ca.crt", "namespace", "token"]
    assert lines[6] == f"hello v {ip} s3cret"
    backend_ip = kube.client.get(SERVICES, "backend", ns)["spec"]["clusterIP"]
    assert lines[7] == f"{backend_ip}:8080 10.0.0.1"
    assert lines[8] == "data"
    # the mount paths exist only inside the pod: nothing was made on the host
    assert not os.path.exists("/etc/cfg") and not os.path.exists("/scratch") and not os.path.exists("/etc/sec")
    # the host's own directories are read-only inside a container: it cannot change the host's files
    host = kubectl(kube, "-n", ns, "exec", "v", "--", "sh", "-c", "echo x > /usr/mini-kube-was-here", check=False)
    assert host.returncode != 0 and "Read-only file system" in host.stderr
    assert not os.path.exists("/usr/mini-kube-was-here")
    # where a volume made an overlay (/etc for /etc/cfg), writes land in the container's own layer
    kubectl(kube, "-n", ns, "exec", "v", "--", "sh", "-c", "echo x > /etc/mini-kube-was-here")
    assert not os.path.exists("/etc/mini-kube-was-here")
    # a read-only volume is read-only
    denied = kubectl(kube, "-n", ns, "exec", "v", "--", "sh", "-c", "echo x > /etc/sec/new", check=False)
    assert denied.returncode != 0


def test_a_missing_configmap_keeps_the_container_waiting(kube, ns):
    spec = pod("w", {"name": "main", "image": "busybox", "command": ["sleep", "300"],
                     "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "k"}}}]})
    kube.client.create(PODS, spec, ns)
    waiting = eventually(lambda: container_state(kube, ns, "w").get("state", {}).get("waiting", {}).get("reason")
                         == "CreateContainerConfigError" and container_state(kube, ns, "w"))
    assert waiting["state"]["waiting"]["message"] == 'configmap "absent" not found'
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "absent"}, "data": {"k": "v"}}, ns)
    wait_running(kube, ns, "w")


def test_host_path_types_make_or_check_the_path(kube, ns, tmp_path):
    """A hostPath of type DirectoryOrCreate is made (with its parents) when missing and the container writes
    there; a missing Directory keeps the Pod waiting with FailedMount and upstream's type-check message."""
    made = tmp_path / "made" / "here"
    volume = {"name": "data", "hostPath": {"path": str(made), "type": "DirectoryOrCreate"}}
    writer = {"name": "main", "image": "busybox", "command": ["sh", "-c", "echo written > /data/out; sleep 300"],
              "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    kube.client.create(PODS, pod("make", writer, volumes=[volume]), ns)
    eventually(lambda: (made / "out").is_file() and (made / "out").read_text() == "written\n", timeout=30)
    assert made.stat().st_mode & 0o777 == 0o755
    missing = {"name": "data", "hostPath": {"path": str(tmp_path / "absent"), "type": "Directory"}}
    run(kube, ns, "check", "sleep 300", volumes=[missing])
    message = eventually(lambda: next((e["message"] for e in kube.client.list(ResourceRef("", "v1", "events"), ns)[
        "items"] if e["involvedObject"]["name"] == "check" and e["reason"] == "FailedMount"), None), timeout=30)
    assert f"hostPath type check failed: {tmp_path / 'absent'} is not a directory" in message
    assert not (tmp_path / "absent").exists() and status_of(kube, ns, "check").get("phase") == "Pending"


def test_an_empty_dir_lives_where_upstreams_kubelet_keeps_it(kube, ns):
    """<kubelet root>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>, as upstream lays volumes out: another
    Pod on the node reads what the first wrote there through a hostPath (as the conformance suite's SELinux
    relabeling tests do, given the kubelet's root dir)."""
    writer = {"name": "main", "image": "busybox", "command": ["sh", "-c", "echo hello > /vol/TEST; sleep 300"],
              "volumeMounts": [{"name": "scratch", "mountPath": "/vol"}]}
    kube.client.create(PODS, pod("writer", writer, volumes=[{"name": "scratch", "emptyDir": {}}]), ns)
    wait_running(kube, ns, "writer")
    uid = kube.client.get(PODS, "writer", ns)["metadata"]["uid"]
    path = Path(kube.nodes.kubelets[0].root) / "pods" / uid / "volumes" / "kubernetes.io~empty-dir" / "scratch"
    eventually(lambda: (path / "TEST").is_file())
    reader = {"name": "main", "image": "busybox", "command": ["cat", "/vol/TEST"],
              "volumeMounts": [{"name": "scratch", "mountPath": "/vol"}]}
    kube.client.create(PODS, pod("reader", reader, restartPolicy="Never",
                                 volumes=[{"name": "scratch", "hostPath": {"path": str(path)}}]), ns)
    eventually(lambda: status_of(kube, ns, "reader").get("phase") == "Succeeded", timeout=30)
    assert kubectl(kube, "-n", ns, "logs", "reader").stdout == "hello\n"


def test_jobs_pods_complete_with_the_process_exit_code(kube, ns):
    run(kube, ns, "ok", "echo done", restartPolicy="Never")
    run(kube, ns, "bad", "exit 3", restartPolicy="Never")
    assert eventually(lambda: status_of(kube, ns, "ok").get("phase") == "Succeeded")
    assert eventually(lambda: status_of(kube, ns, "bad").get("phase") == "Failed")
    ok = container_state(kube, ns, "ok")["state"]["terminated"]
    bad = container_state(kube, ns, "bad")["state"]["terminated"]
    assert (ok["exitCode"], ok["reason"]) == (0, "Completed") and (bad["exitCode"], bad["reason"]) == (3, "Error")
    conditions = {c["type"]: c for c in status_of(kube, ns, "ok")["conditions"]}
    assert conditions["Ready"]["status"] == "False" and conditions["Ready"]["reason"] == "PodCompleted"


def test_a_crashing_container_backs_off(kube, ns):
    run(kube, ns, "crash", "echo attempt; exit 1")
    state = eventually(lambda: (s := container_state(kube, ns, "crash")).get("restartCount", 0) >= 2 and s, timeout=30)
    assert state["lastState"]["terminated"]["exitCode"] == 1
    waiting = eventually(lambda: (container_state(kube, ns, "crash").get("state") or {}).get("waiting"), timeout=30)
    assert waiting["reason"] == "CrashLoopBackOff" and "restarting failed container=main pod=crash_" in waiting["message"]
    assert status_of(kube, ns, "crash")["phase"] == "Running"
    assert kubectl(kube, "-n", ns, "logs", "crash", "--previous").stdout == "attempt\n"
    shown = kubectl(kube, "-n", ns, "get", "pod", "crash").stdout
    assert "CrashLoopBackOff" in shown or "Error" in shown or "Completed" in shown or "Running" in shown
    events = kubectl(kube, "-n", ns, "get", "events", "-o", "wide", "--field-selector", "involvedObject.name=crash").stdout
    for reason, message in [("Pulling", 'Pulling image "busybox"'), ("Pulled", 'Successfully pulled image "busybox" in '),
                            ("Created", "Created container: main"), ("Started", "Started container main"),
                            ("BackOff", "Back-off restarting failed container main in pod crash_")]:
        assert re.search(rf"{reason}\s+pod/crash\s+spec\.containers\{{main\}}\s+kubelet, \S+\s+{re.escape(message)}",
                         events), (reason, events)


def test_a_command_that_cannot_be_run_is_a_start_error(kube, ns):
    """As a runtime's StartContainer fails: Created, then Failed (no Started), state StartError with exit code 128."""
    kube.client.create(PODS, pod("bad", {"name": "main", "image": "busybox:1", "command": ["/no/such"]},
                                 {"name": "other", "image": "busybox:1", "command": ["nosuch"]}, restartPolicy="Never"),
                       ns)
    eventually(lambda: status_of(kube, ns, "bad").get("phase") == "Failed")
    states = {c["name"]: c["state"]["terminated"] for c in status_of(kube, ns, "bad")["containerStatuses"]}
    assert {(s["reason"], s["exitCode"]) for s in states.values()} == {("StartError", 128)}
    assert states["main"]["message"] == 'exec: "/no/such": stat /no/such: no such file or directory'
    assert states["other"]["message"] == 'exec: "nosuch": executable file not found in $PATH'
    def events() -> list[tuple[str, str, str]]:
        return [(e["type"], e["reason"], e["message"]) for e in kube.client.list(ResourceRef("", "v1", "events"), ns)[
            "items"] if e["involvedObject"].get("fieldPath") == "spec.containers{main}"]

    eventually(lambda: len(events()) >= 3)
    assert events()[1:] == [("Normal", "Created", "Created container: main"),
                          ("Warning", "Failed", 'Error: exec: "/no/such": stat /no/such: no such file or directory')]
    assert kubectl(kube, "-n", ns, "logs", "bad", "-c", "main").stdout == ""


def test_init_containers_run_first_in_order(kube, ns):
    spec = pod("i", {"name": "main", "image": "busybox", "command": ["sh", "-c", "cat /work/order; sleep 300"],
                     "volumeMounts": [{"name": "w", "mountPath": "/work"}]},
               initContainers=[{"name": f"init{i}", "image": "busybox",
                                "command": ["sh", "-c", f"echo init{i} >> /work/order"],
                                "volumeMounts": [{"name": "w", "mountPath": "/work"}]} for i in (1, 2)],
               volumes=[{"name": "w", "emptyDir": {}}])
    kube.client.create(PODS, spec, ns)
    wait_running(kube, ns, "i")
    eventually(lambda: pod_log(kube, ns, "i"))
    assert kubectl(kube, "-n", ns, "logs", "i").stdout == "init1\ninit2\n"
    inits = status_of(kube, ns, "i")["initContainerStatuses"]
    assert [s["state"]["terminated"]["reason"] for s in inits] == ["Completed", "Completed"]
    assert [s["ready"] for s in inits] == [True, True]  # as upstream's prober manager: a completed init is ready
    assert kubectl(kube, "-n", ns, "logs", "i", "-c", "init2").stdout == ""  # an init container's log: served


def test_kubectl_debug_runs_an_ephemeral_container_in_the_pod(kube, ns):
    """`kubectl debug -i` adds an ephemeral container through pods/ephemeralcontainers, waits for the kubelet to
    run it, attaches to it; it runs once in the Pod (its hostname, its volumes' neighbours) and its log stays."""
    run(kube, ns, "d", "sleep 300")
    wait_running(kube, ns, "d")
    out = kubectl(kube, "-n", ns, "debug", "-i", "d", "--image=busybox", "-c", "dbg", "--profile=general", "--",
                  "sh", input="echo from-$(hostname)\nexit 3\n", check=False)
    assert "from-d" in out.stdout
    entry = eventually(lambda: next((s for s in status_of(kube, ns, "d").get("ephemeralContainerStatuses") or ()
                                     if "terminated" in s["state"]), None))
    assert (entry["name"], entry["ready"], entry["restartCount"]) == ("dbg", False, 0)
    assert entry["state"]["terminated"]["exitCode"] == 3 and "started" not in entry
    assert kubectl(kube, "-n", ns, "logs", "d", "-c", "dbg").stdout == "from-d\n"
    assert status_of(kube, ns, "d")["phase"] == "Running"  # the Pod itself goes on
    started = {e["involvedObject"].get("fieldPath") for e in kube.client.list(ResourceRef("", "v1", "events"), ns)["items"]
               if e["reason"] == "Started"}
    assert started == {"spec.containers{main}", "spec.ephemeralContainers{dbg}"}


def test_probes_really_run_against_the_process(kube, ns):
    http = {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],  # nginx's own port, as its image
            "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 1},
            "livenessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 1}}
    never = {"name": "main", "image": "busybox", "command": ["sleep", "300"],
             "readinessProbe": {"exec": {"command": ["test", "-f", "/tmp/ready"]}, "periodSeconds": 1,
                                "failureThreshold": 1}}  # out of Ready at the first failure, not the third
    dying = {"name": "main", "image": "busybox", "command": ["sleep", "300"],
             "livenessProbe": {"exec": {"command": ["false"]}, "periodSeconds": 1, "failureThreshold": 1}}
    kube.client.create(PODS, pod("ready", http), ns)  # the three at once: their probes run side by side
    kube.client.create(PODS, pod("gate", never), ns)
    kube.client.create(PODS, pod("dying", dying, terminationGracePeriodSeconds=1), ns)
    wait_running(kube, ns, "ready")
    eventually(lambda: "running" in (container_state(kube, ns, "gate").get("state") or {}))
    assert not container_state(kube, ns, "gate")["ready"]
    kubectl(kube, "-n", ns, "exec", "gate", "--", "touch", "/tmp/ready")
    eventually(lambda: container_state(kube, ns, "gate").get("ready"), timeout=10)
    kubectl(kube, "-n", ns, "exec", "gate", "--", "rm", "/tmp/ready")  # failing again: out of Ready
    eventually(lambda: not container_state(kube, ns, "gate").get("ready"), timeout=15)
    ready = next(c for c in status_of(kube, ns, "gate")["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
    eventually(lambda: container_state(kube, ns, "dying").get("restartCount", 0) >= 1, timeout=20)
    events = {(e["reason"], e["message"], e["involvedObject"].get("fieldPath")) for e in
              kube.client.list(ResourceRef("", "v1", "events"), ns)["items"] if e["involvedObject"]["name"] == "dying"}
    assert ("Unhealthy", "Liveness probe failed: ", "spec.containers{main}") in events  # `false` says nothing
    assert ("Killing", "Container main failed liveness probe, will be restarted", "spec.containers{main}") in events


def test_a_refused_probe_is_told_as_upstream_words_it(kube, ns):
    refused = {"name": "main", "image": "busybox", "command": ["sleep", "300"],
               "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8081}, "periodSeconds": 1},
               "livenessProbe": {"tcpSocket": {"port": 8082}, "periodSeconds": 1, "failureThreshold": 100}}
    kube.client.create(PODS, pod("refused", refused), ns)
    ip = eventually(lambda: status_of(kube, ns, "refused").get("podIP"))
    want = {f'Readiness probe failed: Get "http://{ip}:8081/healthz": dial tcp {ip}:8081: connect: connection refused',
            f"Liveness probe failed: dial tcp {ip}:8082: connect: connection refused"}
    eventually(lambda: want <= {e["message"] for e in kube.client.list(ResourceRef("", "v1", "events"), ns)["items"]
                                if e["reason"] == "Unhealthy"}, timeout=15)
    lines = kubectl(kube, "-n", ns, "describe", "pod", "refused").stdout.split("\nEvents:\n")[1]
    assert re.search(r"Warning\s+Unhealthy\s+.*kubelet\s+Liveness probe failed: dial tcp", lines), lines


@pytest.mark.slow
def test_probes_never_run_before_the_containers_root_is_built(kube, ns, tmp_path):
    """A container's /tmp is its own: a file in the host's /tmp is seen only by a process that is not really in
    the container yet (its root still being built). The first exec probe runs as the container starts."""
    marker = Path("/tmp") / f"mk-host-only-{uuid.uuid4().hex}"
    marker.write_text("")
    seen = tmp_path / "seen"
    try:
        for i in range(3):
            probe = {"exec": {"command": ["sh", "-c", f"test -e {marker} && echo host >> {seen}; true"]},
                     "periodSeconds": 1}
            kube.client.create(PODS, pod(f"probed{i}", {"name": "main", "image": "busybox",
                                                        "command": ["sleep", "300"], "readinessProbe": probe},
                                         terminationGracePeriodSeconds=0), ns)
            eventually(lambda i=i: container_state(kube, ns, f"probed{i}").get("ready"), timeout=20)
        assert not seen.exists()
    finally:
        marker.unlink()


def final_state(kube, ns: str, name: str) -> dict:
    """Delete the Pod and follow it to its end: the container state the kubelet last reported."""
    async def follow() -> dict:
        client = kube.client.async_client
        listed = await client.list(PODS, ns)
        await client.delete(PODS, name, ns)
        state: dict = {}
        async for event in client.watch(PODS, ns, resource_version=listed["metadata"]["resourceVersion"],
                                        fieldSelector=f"metadata.name={name}"):
            statuses = (event["object"].get("status") or {}).get("containerStatuses") or [{}]
            state = statuses[0].get("state") or state
            if event["type"] == "DELETED":
                return state
        return state

    return kube.run(follow(), timeout=60)


def test_graceful_termination_and_the_final_delete(kube, ns):
    run(kube, ns, "g", "trap 'echo got TERM; exit 0' TERM; echo armed; while true; do sleep 0.1; done")
    wait_running(kube, ns, "g")
    eventually(lambda: "armed" in pod_log(kube, ns, "g"))  # the handler is in place
    assert final_state(kube, ns, "g")["terminated"]["exitCode"] == 0  # the TERM handler ran: not a SIGKILL
    run(kube, ns, "stubborn", "trap '' TERM; echo armed; sleep 300 & wait", terminationGracePeriodSeconds=1)
    wait_running(kube, ns, "stubborn")
    eventually(lambda: "armed" in pod_log(kube, ns, "stubborn"))
    killed = final_state(kube, ns, "stubborn")
    assert killed["terminated"]["exitCode"] == 137  # SIGKILL after the grace period


@pytest.mark.slow
def test_port_forward_carries_http(kube, ns):
    kube.client.create(PODS, pod("web", {"name": "web", "image": "traefik/whoami", "readinessProbe": READY_ON_80}), ns)
    wait_running(kube, ns, "web")
    forward = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "port-forward", "pod/web",
                                ":80"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = forward.stdout.readline()
        port = int(line.split("127.0.0.1:")[1].split(" ")[0])
        answers = [subprocess.run(["curl", "-s", "-m", "5", f"http://127.0.0.1:{port}/"], capture_output=True,
                                  text=True).stdout for _ in range(3)]
        assert answers == ["web\n"] * 3
    finally:
        forward.terminate()
        forward.wait(10)
    kube.client.create(SERVICES, {"metadata": {"name": "front"}, "spec": {
        "ports": [{"port": 8080, "targetPort": 80}], "selector": {"run": "web"}}}, ns)
    kube.client.patch(PODS, "web", {"metadata": {"labels": {"run": "web"}}}, ns)
    forward = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "port-forward", "svc/front",
                                ":8080"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:  # a Service's port: kubectl picks a Pod behind it and forwards to the target port
        line = forward.stdout.readline()
        port = int(line.split("127.0.0.1:")[1].split(" ")[0])
        assert subprocess.run(["curl", "-s", "-m", "5", f"http://127.0.0.1:{port}/"], capture_output=True,
                              text=True).stdout == "web\n"
    finally:
        forward.terminate()
        forward.wait(10)


def test_pod_node_and_service_proxies(kube, ns):
    web = pod("web", {"name": "web", "image": "traefik/whoami", "ports": [{"containerPort": 80}],
                      "readinessProbe": READY_ON_80})
    web["metadata"]["labels"] = {"app": "web"}
    kube.client.create(PODS, web, ns)
    kube.client.create(SERVICES, {"metadata": {"name": "web"}, "spec": {
        "ports": [{"port": 8080, "targetPort": 80}], "selector": {"app": "web"}}}, ns)
    wait_running(kube, ns, "web")
    assert kubectl(kube, "get", "--raw", f"/api/v1/namespaces/{ns}/pods/web:80/proxy/").stdout == "web\n"
    assert kubectl(kube, "get", "--raw", "/api/v1/nodes/mini-kube/proxy/healthz").stdout == "ok"
    assert eventually(lambda: kubectl(kube, "get", "--raw", f"/api/v1/namespaces/{ns}/services/web:8080/proxy/",
                                      check=False).stdout) == "web\n"
    listed = json.loads(kubectl(kube, "get", "--raw", "/api/v1/nodes/mini-kube/proxy/pods").stdout)
    assert any(p["metadata"]["name"] == "web" for p in listed["items"])


def test_attach_follows_the_output_and_kubectl_proxy_reaches_logs(kube, ns):
    run(kube, ns, "talk", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done")
    wait_running(kube, ns, "talk")
    proc = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "attach", "talk"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(10)
    assert first.startswith("tick ")
    # --since keeps the lines the kubelet stamped in the last second (stamped as it reads them, so how many
    # there are depends on the machine's load, not only on the 0.2 s between ticks)
    first = eventually(lambda: (line := _first_stamped(kube, ns)) and _age(line) > 2 and line)
    asked = dt.datetime.now(dt.UTC)
    since = _lines(kube, ns, "--timestamps", "--since=1s")
    assert first not in since and all(_age(line, asked) <= 1.001 for line in since)
    proxy = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "proxy", "--port=0"],
                             stdout=subprocess.PIPE, text=True)
    try:
        port = int(proxy.stdout.readline().strip().rsplit(":", 1)[1])
        log = subprocess.run(["curl", "-s", "-m", "5", f"http://127.0.0.1:{port}/api/v1/namespaces/{ns}/pods/talk/"
                              "log?tailLines=1"], capture_output=True, text=True).stdout
        assert log.startswith("tick ")
    finally:
        proxy.terminate()
        proxy.wait(10)


def _lines(kube, ns: str, *flags: str) -> list[str]:
    return kubectl(kube, "-n", ns, "logs", "talk", *flags).stdout.splitlines()


def _first_stamped(kube, ns: str) -> str:
    """The log's first line with its timestamp (`kubectl logs --timestamps`' first line), read in-process: for
    waiting until it is old enough without a kubectl run per look."""
    return next(iter((kube.client.request("GET", PODS.path(ns, "talk", "log"), params={"timestamps": "true"})
                      or "").splitlines()), "")


def _age(line: str, now: dt.datetime | None = None) -> float:
    """Seconds from a `--timestamps` log line's stamp (RFC 3339, nanoseconds) to `now`."""
    stamp = line.split(" ", 1)[0].rstrip("Z")
    whole, _, fraction = stamp.partition(".")
    when = dt.datetime.fromisoformat(whole).replace(tzinfo=dt.UTC) + dt.timedelta(seconds=float(f"0.{fraction or 0}"))
    return ((now or dt.datetime.now(dt.UTC)) - when).total_seconds()


def test_kubectl_that_speaks_only_spdy_can_exec(kube, ns):
    """kubectl 1.27 knows no WebSocket exec: it upgrades to SPDY/3.1 (handlers/spdy_exec.py)."""
    run(kube, ns, "old", "sleep 300")
    wait_running(kube, ns, "old")
    old = kubectl(kube, "-n", ns, "exec", "old", "--", "sh", "-c", "echo old; exit 4", version="1.27", check=False)
    assert (old.returncode, old.stdout) == (4, "old\n"), old.stderr


@pytest.mark.slow
def test_a_deadline_counts_from_the_pods_start(kube, ns):
    """activeDeadlineSeconds counts from the Pod's start time: a Pod whose deadline passes fails, whether or not its
    containers had started by then (a loaded node may not have started them within 1 s)."""
    run(kube, ns, "brief", "sleep 300", activeDeadlineSeconds=1, terminationGracePeriodSeconds=1)
    status = eventually(lambda: (s := status_of(kube, ns, "brief")).get("phase") == "Failed" and s, timeout=20)
    assert status["reason"] == "DeadlineExceeded"


@pytest.mark.slow
def test_active_deadline_fails_the_pod(kube, ns):
    """A deadline added or shortened on a running Pod (a mutable spec field) is followed: its containers are
    killed and the Pod fails, with upstream's events."""
    run(kube, ns, "late", "sleep 300", activeDeadlineSeconds=3600, terminationGracePeriodSeconds=1)
    wait_running(kube, ns, "late")
    kubectl(kube, "-n", ns, "patch", "pod", "late", "-p", '{"spec":{"activeDeadlineSeconds":1}}')
    status = eventually(lambda: (s := status_of(kube, ns, "late")).get("phase") == "Failed" and s, timeout=20)
    assert (status["reason"], status["message"]) == (
        "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
    assert "terminated" in container_state(kube, ns, "late")["state"]
    def events() -> set[tuple[str, str, str]]:
        return {(e["type"], e["reason"], e["involvedObject"].get("fieldPath", ""))
                for e in kube.client.list(ResourceRef("", "v1", "events"), ns)["items"]}

    eventually(lambda: ("Normal", "Killing", "spec.containers{main}") in events())
    assert ("Normal", "DeadlineExceeded", "") in events()  # a Normal event about the Pod, as upstream's
