"""Audit of early refusals and the audit writer's failure policy (issue #10 item 9): failed authentication and
refused impersonation are recorded; a failing audit file drops events, counted, and never stalls requests or
grows memory."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mini_kube.apiserver.auth.audit import AuditLog

from mini_kube.testing import MiniKube


def _request(kube, path: str, headers: dict[str, str], cert: bool = False) -> int:
    context = ssl.create_default_context(cafile=str(Path(kube.config.data_dir) / "pki" / "ca.crt"))
    if cert:
        pki = Path(kube.config.data_dir) / "pki"
        context.load_cert_chain(pki / "admin.crt", pki / "admin.key")
    try:
        with urllib.request.urlopen(urllib.request.Request(kube.url + path, headers=headers), context=context,
                                    timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _events(log: Path, predicate, timeout: float = 5.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        found = [e for e in events if predicate(e)]
        if found:
            return found
        time.sleep(0.05)
    return []


def test_failed_authentication_and_refused_impersonation_are_audited(tmp_path):
    log = tmp_path / "audit.log"
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("carol-token,carol,carol-uid\n")
    with MiniKube(insecure_http=False, controllers=False, audit_log=str(log), data_dir=str(tmp_path / "d"),
                  token_auth_file=str(tokens)) as kube:
        assert _request(kube, "/api/v1/namespaces", {"Authorization": "Bearer wrong"}) == 401
        assert _request(kube, "/api/v1/namespaces/default/pods",
                        {"Authorization": "Bearer carol-token", "Impersonate-User": "admin"}) == 403
    unauthenticated = _events(log, lambda e: e["responseStatus"]["code"] == 401)
    assert unauthenticated and unauthenticated[0]["requestURI"] == "/api/v1/namespaces"
    refused = _events(log, lambda e: e["responseStatus"]["code"] == 403)
    assert refused and refused[0]["user"]["username"] == "carol"
    assert refused[0]["objectRef"]["resource"] == "pods"


@pytest.mark.slow
def test_a_failing_audit_file_drops_events_and_keeps_serving(tmp_path):
    with MiniKube(insecure_http=False, controllers=False, audit_log="/dev/full", data_dir=str(tmp_path)) as kube:
        for _ in range(50):
            assert _request(kube, "/api/v1/namespaces", {}, cert=True) == 200
        auditor = kube.server.security.auditor
        deadline = time.monotonic() + 5
        while auditor.log.dropped < 50 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert auditor.log.dropped >= 50
        assert auditor.log._thread.is_alive()


def test_the_audit_queue_is_bounded(tmp_path):
    audit = AuditLog(None)
    audit._thread = object()  # a writer that never writes: only the bound protects memory
    for i in range(AuditLog.MAX_QUEUED + 500):
        audit.log({"i": i})
    assert audit._queue.qsize() == AuditLog.MAX_QUEUED and audit.dropped == 500
