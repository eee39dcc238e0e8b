"""Fixtures shared by several test folders."""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import socket
import sys
import tempfile
from collections import Counter

import pytest
from hypothesis import settings

from tests.etcd_support import EtcdServer


def write_bytecode() -> None:
    """Where PYTHONDONTWRITEBYTECODE is set, cache compiled modules as Python does by default, in `__pycache__`
    beside the sources (ignored by git), rather than compiling again in every process: each pytest-xdist worker
    rewrote the asserts of every test module (~7 CPU-seconds each), and each Python a test starts (mini-kube's
    commands and servers, Pods running mini-kube's programs, the etcd suites' pytest) compiled what it imported.
    Beside the sources, not in a cache directory of their own (PYTHONPYCACHEPREFIX): there Python looks for no
    other bytecode, so it compiled again all that pip had compiled at install (the whole of site-packages: a cold
    run's collection on four workers, 60 -> 38 CPU-s), and Pods, which see the installation read-only and do not
    inherit the variable, found none of mini-kube's. Set before the workers start, so they and every child inherit it."""
    if sys.dont_write_bytecode:
        sys.dont_write_bytecode = False
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # absent when `python -B` set it


def kubectl_cache_for_the_run() -> None:
    """kubectl caches each server's discovery and OpenAPI documents under ~/.kube/cache/<host_port>: every test
    cluster's port added ~1 MB there that nothing removed (2.2 GB on the shared machine), and a later cluster on
    the same port could read an earlier one's. The run's kubectl use a cache of their own (KUBECACHEDIR, which
    every kubectl from 1.27 reads; the workers inherit it), removed when the run ends; a KUBECACHEDIR of the
    user's own is kept."""
    if "KUBECACHEDIR" in os.environ:
        return
    directory = tempfile.mkdtemp(prefix="mini-kube-kubectl-cache-")
    os.environ["KUBECACHEDIR"] = directory
    atexit.register(shutil.rmtree, directory, ignore_errors=True)


def go_collects_less_often() -> None:
    """The suite runs real kubectl ~2,000 times, each a Go process of a fraction of a second whose garbage
    collector, at Go's default GOGC=100, runs several times while kubectl starts (registering its API types
    builds most of its heap) and again while `apply` reads the OpenAPI documents. GOGC=400 lets the heap grow to
    five times what is live before collecting: a run's CPU drops by about a fifth (`get` 0.104 -> 0.080 CPU-s,
    `apply` 0.31 -> 0.23), what kubectl does and prints is the same. The run's other Go programs (etcd) inherit
    it too; a GOGC of the user's own is kept."""
    os.environ.setdefault("GOGC", "400")


write_bytecode()
kubectl_cache_for_the_run()
go_collects_less_often()

settings.register_profile("suite", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))
"""Property tests take their number of examples from the profile: `suite` (100, hypothesis' own default) for
every run and CI, `thorough` (`HYPOTHESIS_PROFILE=thorough`, 1000) for a deeper search before a release or after
changing what they cover. No deadline: the machine is shared and slow, and speed belongs in bench/."""


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """In a pytest-xdist worker, pytest-rerunfailures keeps its rerun counts in the controller, over one TCP
    connection per worker: before each test it sends a `set` (no answer) and then a `get`, so Nagle's algorithm
    holds the `get` until the controller's delayed ACK of the `set` comes, 40 ms later. That was ~40 ms idle per
    test, 2,789 times (tests/validation/test_validation_kinds.py's 220 tests: 11.4 s with `-n 1`, 0.45 s without
    workers; pytest-rerunfailures issue #242). Its messages are requests waiting for answers: send them at once."""
    connection = getattr(getattr(config, "failures_db", None), "sock", None)
    if isinstance(connection, socket.socket) and connection.family in (socket.AF_INET, socket.AF_INET6):
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session):
    """Collect without the cyclic garbage collector (importing ~220 test modules and what they import is ~200k
    objects and no garbage to speak of), then freeze what collection made: each process's later full collections
    (a dozen in three modules' run, while its clusters serve) no longer walk it (0.30 -> 0.06 s each)."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()
        gc.enable()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker, the modules with the most `slow` tests first, then the rest, largest first; each
    module's own order kept. `--dist loadscope` (with `--no-loadscope-reorder`, in addopts) hands the modules out
    in this order: the long ones start at once on every worker and short ones fill the end, rather than a lone
    slow module starting last and running while the other workers wait."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a run without workers keeps the collection order, so each package's fixtures start once
    module = {id(item): item.nodeid.split("::", 1)[0] for item in items}
    slow = Counter(module[id(item)] for item in items if item.get_closest_marker("slow"))
    size = Counter(module.values())
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-slow[module[id(item)]], -size[module[id(item)]], module[id(item)],
                                 position[id(item)]))


@pytest.fixture(scope="session")
def etcd_server():
    """One etcd for the session (from the test extras); each test uses its own key prefix."""
    server = EtcdServer()
    yield server
    server.stop()


API_TEST_CONTROLLERS = ("*,-serviceaccount,-root-ca-cert-publisher,-replicaset,-deployment,-disruption,"
                        "-statefulset,-daemonset,-podgc,-job,-cronjob,-ttl-after-finished,-horizontalpodautoscaling")
"""This suite's API-level tests (kubectl scenarios pinned to the reference captures made without a controller
manager) run the controllers that leave their objects alone: not the two that add objects to every namespace
(the `default` ServiceAccount, `kube-root-ca.crt`), nor the workload controllers that turn their Deployments
into ReplicaSets and Pods (and Jobs into Pods). The plugin's fixtures run all of them, as tests/controllers does."""


@pytest.fixture(scope="session")
def mini_kube_session():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=API_TEST_CONTROLLERS, scheduler=False) as kube:
        yield kube


@pytest.fixture
def mini_kube():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=API_TEST_CONTROLLERS, scheduler=False) as kube:
        yield kube
