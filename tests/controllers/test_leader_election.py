"""Two `mini-kube controllers --leader-elect` processes: one acts, and when it is killed the other takes over
within the lease duration (and only then acts)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

from mini_kube.client import ApiClient
from mini_kube.client.leaderelection import LeaderElector
from mini_kube.machinery.refs import LEASES, NAMESPACES, SERVICEACCOUNTS

from mini_kube.testing import MiniKube


def _manager(kubeconfig: str, identity_hint: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "controllers", "--kubeconfig",
                             kubeconfig, "--controllers", "serviceaccount", "--leader-elect",
                             "--leader-elect-lease-duration", "2", "--leader-elect-renew-deadline", "1.5",
                             "--leader-elect-retry-period", "0.2"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True, env={"HOSTNAME_HINT": identity_hint,
                                                                      "PATH": "/usr/bin:/bin"})


def _holder(kube) -> str:
    try:
        return kube.client.get(LEASES, "kube-controller-manager", "kube-system")["spec"].get("holderIdentity") or ""
    except Exception:
        return ""


def _wait(predicate, timeout: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_the_controllers_process_serves_health_and_stops_on_sigterm():
    import urllib.request

    with MiniKube(controllers=False) as kube:
        proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "controllers", "--kubeconfig",
                                 kube.kubeconfig, "--health-address", "127.0.0.1:0"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        try:
            url = proc.stdout.readline().strip().rsplit(" ", 1)[1]
            assert urllib.request.urlopen(url, timeout=5).read() == b"ok"
            _wait(lambda: urllib.request.urlopen(url.replace("healthz", "readyz"), timeout=5).status == 200, 10)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(15) == 0


def test_one_leader_acts_and_the_other_takes_over_when_it_dies():
    with MiniKube(controllers=False) as kube:
        first = _manager(kube.kubeconfig, "a")
        second = _manager(kube.kubeconfig, "b")
        try:
            _wait(lambda: _holder(kube), 15)
            leader = _holder(kube)
            pids = {first.pid: first, second.pid: second}
            active = next(p for pid, p in pids.items() if leader.endswith(f"_{pid}"))
            standby = next(p for p in pids.values() if p is not active)
            kube.client.create(NAMESPACES, {"metadata": {"name": "one"}})
            _wait(lambda: _exists(kube, "one"), 10)
            active.send_signal(signal.SIGKILL)  # no release: the lease must expire
            active.wait(10)
            _wait(lambda: _holder(kube).endswith(f"_{standby.pid}"), 15)  # once the 2 s lease has expired
            kube.client.create(NAMESPACES, {"metadata": {"name": "two"}})
            _wait(lambda: _exists(kube, "two"), 10)
            lease = kube.client.get(LEASES, "kube-controller-manager", "kube-system")
            assert lease["spec"]["leaseTransitions"] >= 1
        finally:
            for proc in (first, second):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(15)


def _exists(kube, namespace: str) -> bool:
    try:
        kube.client.get(SERVICEACCOUNTS, "default", namespace)
        return True
    except Exception:
        return False


def test_a_leader_whose_work_ends_gives_the_lease_up_at_once(mini_kube):
    """The renewal loop waits on the leading task, not a retry period: `run` returns as soon as `lead` does."""
    async def scenario() -> float:
        client = ApiClient.from_kubeconfig(mini_kube.kubeconfig)
        elector = LeaderElector(client, "short-lived", "me", retry_period=5.0)
        loop = asyncio.get_running_loop()

        async def lead() -> None:
            await asyncio.sleep(0.1)

        started = loop.time()
        await asyncio.wait_for(elector.run(lead), 10)
        took = loop.time() - started
        await client.close()
        return took

    assert mini_kube.run(scenario()) < 2.0
    assert mini_kube.client.get(LEASES, "short-lived", "kube-system")["spec"]["holderIdentity"] == ""
