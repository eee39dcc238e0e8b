"""Fixtures shared by several test folders."""

from __future__ import annotations

import pytest

from tests.etcd_support import EtcdServer


@pytest.fixture(scope="session")
def etcd_server():
    """One etcd for the session (from the test extras); each test uses its own key prefix."""
    server = EtcdServer()
    yield server
    server.stop()


API_TEST_CONTROLLERS = ("*,-serviceaccount,-root-ca-cert-publisher,-replicaset,-deployment,-disruption,"
                        "-statefulset,-daemonset,-podgc,-job,-cronjob,-ttl-after-finished")
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
