"""Scale figures (issue #28): one Deployment created with R replicas over N simulated nodes, then scaled to 0.

For each phase, "up" (create -> R Pods Running and Ready) and "down" (scale to 0 -> no Pod left), it prints the
wall time, the control plane's CPU (user + system seconds of its processes) and peak RSS, and the latency of
`kubectl get nodes` sampled every second meanwhile (the API must stay responsive: under 1 s).

mini-kube runs as `mini-kube serve --nodes N --node-runtime simulated` (one process, nodes included; no
cloud-controller-manager, no DNS). Given `--real-binaries DIR` (kube-apiserver, kube-controller-manager and
kube-scheduler built from source), the same run goes first to a real control plane started by
bench/real_control_plane.py (with etcd, on 127.0.0.1) at its default settings, then to a fresh one with the
controllers' rate limits raised (`--kube-api-qps=10000 --kube-api-burst=10000`), its nodes being the same simulated
kubelets run by this script in a process of their own, and the ratio per phase is printed. `--real-kubeconfig`
(a kube-apiserver with its kube-controller-manager and kube-scheduler, started elsewhere) does the same for one
control plane; `--real-pids` (its process ids) adds its CPU and RSS. Without either, the ratios are to the real
control plane's figures measured on the development machine (issue #28: kube-apiserver v1.32.13 + etcd 3.5, 2
cores).

    .venv/bin/python bench/scale_bench.py                      # 20 nodes, 1,000 replicas
    .venv/bin/python bench/scale_bench.py --nodes 100 --replicas 10000
    .venv/bin/python bench/scale_bench.py --real-binaries /work/.realk8s/bin
    .venv/bin/python bench/scale_bench.py --real-kubeconfig ~/real.kubeconfig --real-pids 101,102,103,104
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "scale-bench"
NAME = "scale"
KUBECTL = os.environ.get("KUBECTL", "kubectl")
TICKS = os.sysconf("SC_CLK_TCK")
# issue #28, the real control plane on the 2-core development machine, 1,000 replicas over 20 nodes:
# (default settings, with --kube-api-qps=10000 --kube-api-burst=10000), seconds
IDLE_SECONDS = 20
REAL_MEASURED = {"up": (50.0, "11.7-14.1", 11.7), "down": (50.5, "9.8-10.4", 9.8)}


# -- processes -----------------------------------------------------------------------------------------------
def process_tree(pids: list[int]) -> list[int]:
    """The processes and their descendants (the nodes of a real run may be children)."""
    found, todo = [], list(pids)
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                todo.extend(int(c) for c in children)
        except OSError:
            pass
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in process_tree(pids):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def peak_rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in process_tree(pids):
        try:
            match = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
        except OSError:
            continue
        total += int(match.group(1)) if match else 0
    return total / 1024


def start_minikube(tmp: str, nodes: int) -> tuple[subprocess.Popen[str], str]:
    kubeconfig = f"{tmp}/kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", f"{tmp}/data",
                             "--port", "0", "--kubeconfig", kubeconfig, "--nodes", str(nodes),
                             "--node-runtime", "simulated", "--no-ccm", "--no-dns"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "ready at" not in line:
        proc.kill()
        raise SystemExit(f"mini-kube did not start: {line!r}")
    return proc, kubeconfig


def start_nodes(kubeconfig: str, nodes: int) -> subprocess.Popen[str]:
    """The simulated nodes for a real control plane: this script in `--run-nodes` mode."""
    from real_control_plane import die_with_parent

    proc = subprocess.Popen([sys.executable, __file__, "--run-nodes", str(nodes), "--real-kubeconfig", kubeconfig],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    assert proc.stdout is not None
    if "nodes ready" not in proc.stdout.readline():
        proc.kill()
        raise SystemExit("the simulated nodes did not start")
    return proc


def run_nodes(kubeconfig: str, count: int) -> None:
    """Run `count` simulated nodes (kubelet and kube-proxy each) against a server until killed."""
    sys.path.insert(0, str(ROOT))
    from mini_kube.client import ApiClient
    from mini_kube.controllers.signals import until_signalled

    from mini_kube.node import node_names, start_in_process

    async def main() -> None:
        def client() -> ApiClient:
            return ApiClient.from_kubeconfig(kubeconfig, user_agent="kubelet")

        running = await start_in_process(client, node_names(count), runtime="simulated")
        print("nodes ready", flush=True)
        try:
            await until_signalled()
        finally:
            await running.stop()

    asyncio.run(main())


# -- the run -------------------------------------------------------------------------------------------------
@dataclass
class Phase:
    seconds: float = 0.0
    cpu: float | None = None
    nodes_cpu: float | None = None  # the simulated nodes' own process, where they are not in the control plane's
    latencies: list[float] = field(default_factory=list)


@dataclass
class Result:
    """One control plane's run: its phases and peak RSS (the nodes' own process's apart, where they have one)."""

    phases: dict[str, Phase]
    rss: float | None = None
    nodes_rss: float | None = None


class Probe(threading.Thread):
    """`kubectl get nodes` once a second; the latencies land in the current phase."""

    def __init__(self, kubeconfig: str) -> None:
        super().__init__(daemon=True)
        self.kubeconfig = kubeconfig
        self.phase: Phase | None = None
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            started = time.perf_counter()
            subprocess.run([KUBECTL, "--kubeconfig", self.kubeconfig, "get", "nodes", "-o", "name"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            if self.phase is not None:
                self.phase.latencies.append(time.perf_counter() - started)
            self.stopped.wait(max(0.0, 1.0 - (time.perf_counter() - started)))


def deployment(replicas: int) -> dict:
    labels = {"app": NAME}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": NAME},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                                           "terminationGracePeriodSeconds": 30}}}}


def ready_pods(core, selector: str) -> tuple[int, int]:  # noqa: ANN001
    """(Pods, Pods Running and Ready) of the Deployment."""
    pods = core.list_namespaced_pod(NAMESPACE, label_selector=selector, _preload_content=False)
    import orjson

    items = orjson.loads(pods.data)["items"]
    ready = sum(1 for p in items if (p.get("status") or {}).get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in p["status"].get("conditions") or ()))
    return len(items), ready


def profiler(pid: int, out: str) -> subprocess.Popen[bytes]:
    """py-spy sampling `pid` into `out` (collapsed stacks, for flame graphs or grep) until interrupted."""
    return subprocess.Popen(["py-spy", "record", "-p", str(pid), "-o", out, "--format", "raw", "-r", "50"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(kubeconfig: str, nodes: int, replicas: int, pids: list[int], timeout: float,
        profile: str = "", node_pids: tuple[int, ...] = ()) -> dict[str, Phase]:
    from kubernetes import client, config

    api = config.new_client_from_config(kubeconfig)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    deadline = time.monotonic() + 120
    while sum(1 for n in core.list_node().items if any(c.type == "Ready" and c.status == "True"
                                                       for c in n.status.conditions or ())) < nodes:
        if time.monotonic() > deadline:
            raise SystemExit(f"fewer than {nodes} nodes Ready after 120 s")
        time.sleep(0.5)
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    while True:  # the namespace's default ServiceAccount, which Pods need
        try:
            core.read_namespaced_service_account("default", NAMESPACE)
            break
        except client.ApiException:
            time.sleep(0.2)
    phases = {"idle": Phase(), "up": Phase(), "down": Phase()}
    if pids:  # what the control plane spends with nothing to do (leases, node status): every phase pays it
        cpu, started = cpu_seconds(pids), time.perf_counter()
        time.sleep(IDLE_SECONDS)
        phases["idle"] = Phase(time.perf_counter() - started, cpu_seconds(pids) - cpu)
    probe = Probe(kubeconfig)
    probe.start()
    selector = f"app={NAME}"
    try:
        for name, action, done in (
                ("up", lambda: apps.create_namespaced_deployment(NAMESPACE, deployment(replicas)),
                 lambda: ready_pods(core, selector) == (replicas, replicas)),
                ("down", lambda: apps.patch_namespaced_deployment_scale(NAME, NAMESPACE, {"spec": {"replicas": 0}}),
                 lambda: ready_pods(core, selector)[0] == 0)):
            phase = phases[name]
            probe.phase = phase
            spy = profiler(pids[0], f"{profile}-{name}.txt") if profile else None
            cpu, started = cpu_seconds(pids) if pids else 0.0, time.perf_counter()
            nodes_cpu = cpu_seconds(list(node_pids))
            action()
            while True:
                time.sleep(0.25)
                status = apps.read_namespaced_deployment_status(NAME, NAMESPACE).status
                settled = (status.ready_replicas or 0) == replicas if name == "up" else not status.replicas
                if settled and done():
                    break
                if time.perf_counter() - started > timeout:
                    raise SystemExit(f"{name}: not done after {timeout} s ({ready_pods(core, selector)})")
            phase.seconds = time.perf_counter() - started
            phase.cpu = cpu_seconds(pids) - cpu if pids else None
            phase.nodes_cpu = cpu_seconds(list(node_pids)) - nodes_cpu if node_pids else None
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(60)
            probe.phase = None
            print(f"  {name}: {phase.seconds:.1f} s" + (f", {phase.cpu:.1f} s CPU" if pids else "")
                  + (f" (+ {phase.nodes_cpu:.1f} s the nodes)" if node_pids else ""), flush=True)
    finally:
        probe.stopped.set()
        core.delete_namespace(NAMESPACE)
    return phases


def latency(phase: Phase) -> str:
    if not phase.latencies:
        return "-"
    return f"{statistics.median(phase.latencies):.2f}/{max(phase.latencies):.2f}"


def report(nodes: int, replicas: int, mini: Result, reals: dict[str, Result]) -> None:
    """A row per phase and control plane; the real ones' with mini-kube's time and CPU as a ratio of theirs.

    mini-kube's CPU and RSS include its simulated nodes (one process); a real control plane's exclude them (they
    run in this bench's node process, shown apart), so the CPU ratio is to the real control plane plus its nodes.
    """
    print(f"\n{replicas} replicas over {nodes} simulated nodes")
    print(f"{'control plane':22}{'phase':6}{'time s':>8}{'CPU s':>8}{'nodes CPU s':>12}{'get nodes p50/max':>19}"
          "  mini-kube's time, CPU as a ratio")
    for name in ("up", "down"):
        phase = mini.phases[name]
        print(f"{'mini-kube':22}{name:6}{phase.seconds:8.1f}{phase.cpu or 0:8.1f}{'(incl.)':>12}"
              f"{latency(phase):>19}")
        for label, real in reals.items():
            other = real.phases[name]
            ratio = f"time {phase.seconds / other.seconds:.2f}x"
            if other.cpu is not None and phase.cpu is not None:
                ratio += f", CPU {phase.cpu / (other.cpu + (other.nodes_cpu or 0)):.2f}x"
            nodes_cpu = f"{other.nodes_cpu:.1f}" if other.nodes_cpu is not None else "-"
            cpu = f"{other.cpu:.1f}" if other.cpu is not None else "-"
            print(f"{label:22}{name:6}{other.seconds:8.1f}{cpu:>8}{nodes_cpu:>12}{latency(other):>19}  {ratio}")
        if not reals and (nodes, replicas) == (20, 1000):
            default, raised, best = REAL_MEASURED[name]
            print(f"{'(issue #28, measured)':22}{name:6}  time {phase.seconds / default:.2f}x of defaults "
                  f"({default} s), {phase.seconds / best:.2f}x of raised QPS ({raised} s)")
    up, down = mini.phases["up"].cpu or 0, mini.phases["down"].cpu or 0
    idle = mini.phases["idle"]
    print(f"mini-kube CPU down/up: {down / up:.2f}  (target <= 1); idle: "
          f"{100 * (idle.cpu or 0) / (idle.seconds or 1):.1f}% of a core, which each phase pays for its duration")
    print(f"peak RSS: mini-kube {mini.rss or 0:.0f} MiB (nodes included)", end="")
    for label, real in reals.items():
        if real.rss is not None:
            print(f"; {label} {real.rss:.0f} MiB (+ nodes {real.nodes_rss or 0:.0f} MiB)", end="")
    if not reals and (nodes, replicas) == (20, 1000):
        print("; real (issue #28): 798-801 MiB (nodes excluded)", end="")
    print()


def run_real(kubeconfig: str, pids: list[int], args: argparse.Namespace) -> Result:
    """The run on a real control plane, its nodes this bench's simulated kubelets in a process of their own."""
    node_proc = start_nodes(kubeconfig, args.nodes)
    try:
        phases = run(kubeconfig, args.nodes, args.replicas, pids, args.timeout, node_pids=(node_proc.pid,))
        return Result(phases, peak_rss_mib(pids) if pids else None, peak_rss_mib([node_proc.pid]))
    finally:
        node_proc.terminate()
        node_proc.wait(30)


def run_minikube(args: argparse.Namespace) -> Result:
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        proc, kubeconfig = start_minikube(tmp, args.nodes)
        try:
            phases = run(kubeconfig, args.nodes, args.replicas, [proc.pid], args.timeout, args.profile)
            return Result(phases, peak_rss_mib([proc.pid]))
        finally:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a phase may take")
    parser.add_argument("--real-binaries", default="",
                        help="dir of kube-apiserver, kube-controller-manager, kube-scheduler: run there too, at "
                             "default settings and with the controllers' QPS raised")
    parser.add_argument("--real-settings", default="defaults,raised",
                        help="with --real-binaries: which of defaults,raised to run")
    parser.add_argument("--real-kubeconfig", default="", help="kubeconfig of a real control plane to compare")
    parser.add_argument("--real-pids", default="", help="its processes (comma-separated), for CPU and RSS")
    parser.add_argument("--profile", default="", help="py-spy mini-kube's phases into PREFIX-up.txt, PREFIX-down.txt")
    parser.add_argument("--run-nodes", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_nodes:
        return run_nodes(args.real_kubeconfig, args.run_nodes)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop what was started (`finally`s), then exit
    reals: dict[str, Result] = {}
    if args.real_kubeconfig:
        print("real control plane:", flush=True)
        pids = [int(p) for p in args.real_pids.split(",") if p]
        reals["real"] = run_real(args.real_kubeconfig, pids, args)
    if args.real_binaries:
        from real_control_plane import RealControlPlane

        for setting in args.real_settings.split(","):
            label = {"defaults": "real, defaults", "raised": "real, QPS 10000"}[setting]
            print(f"{label}:", flush=True)
            with RealControlPlane(args.real_binaries, raised_qps=setting == "raised") as plane:
                reals[label] = run_real(str(plane.kubeconfig), plane.pids(), args)
    print("mini-kube:", flush=True)
    mini = run_minikube(args)
    report(args.nodes, args.replicas, mini, reals)


if __name__ == "__main__":
    main()
