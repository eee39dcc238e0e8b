"""/readyz, /livez and /healthz ask etcd (they said `[+]etcd ok` while etcd was down), and a failing etcd logs
its traceback once per interval, not once per request."""

from __future__ import annotations

import logging
import time
import urllib.error
import urllib.request

import pytest

from mini_kube.testing import MiniKube
from tests.etcd_support import EtcdServer
from tests.helpers import kubectl


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture
def etcd():
    server = EtcdServer()
    yield server
    server.stop()


@pytest.mark.slow
def test_readyz_fails_naming_etcd_while_etcd_does_not_answer(etcd):
    with MiniKube(controllers=False, scheduler=False, etcd_servers=[etcd.url], etcd_prefix="/health-test") as kube:
        assert get(kube.url + "/readyz") == (200, "ok")
        etcd.pause()
        try:
            time.sleep(1.1)  # the last answer is reused for a second
            started = time.monotonic()
            status, body = get(kube.url + "/readyz")
            assert time.monotonic() - started < 3.5  # the probe gives up after 2 s
            assert status == 500
            assert "[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n" in body
            assert body.endswith("readyz check failed\n") and "[+]ping ok\n" in body
            status, body = get(kube.url + "/livez/etcd")
            assert (status, body) == (500, "internal server error: no etcd endpoint answered: no answer within 2 s\n")
            assert get(kube.url + "/readyz?exclude=etcd&exclude=etcd-readiness") == (200, "ok")
        finally:
            etcd.resume()
        time.sleep(1.1)
        assert get(kube.url + "/readyz") == (200, "ok")
        etcd.kill()
        time.sleep(1.1)
        status, body = get(kube.url + "/healthz")
        assert status == 500 and "[-]etcd failed: reason withheld\n" in body


def test_failed_etcd_requests_log_one_traceback_per_interval(etcd, caplog):
    with MiniKube(controllers=False, scheduler=False, etcd_servers=[etcd.url], etcd_prefix="/log-test") as kube:
        etcd.kill()
        with caplog.at_level(logging.WARNING, logger="mini-kube.apiserver"):
            for i in range(6):
                out = kubectl(kube, "create", "configmap", f"c{i}", check=False)
                assert "Internal error occurred" in out.stderr
    failures = [r for r in caplog.records if r.name == "mini-kube.apiserver" and "internal error on" in r.getMessage()]
    assert len(failures) == 1, [r.getMessage() for r in failures]
    message = failures[0].getMessage()
    assert message.startswith("internal error on POST /api/v1/namespaces/default/configmaps: StoreError: no etcd "
                              "endpoint answered") and "Traceback" in message
