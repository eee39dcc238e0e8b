"""The audit log: one JSON line per request with who, what and the response code (off by default)."""

from __future__ import annotations

import json
import stat
import time

from mini_kube.testing import MiniKube
from tests.helpers import kubectl


def test_audit_log_records_requests(tmp_path):
    log = tmp_path / "audit.log"
    with MiniKube(insecure_http=False, controllers=False, audit_log=str(log)) as kube:
        kubectl(kube, "create", "configmap", "audited", "-n", "default")
        denied = kubectl(kube, "get", "cm", "nope", "-n", "default", check=False)
        assert denied.returncode == 1
    deadline = time.time() + 5
    events = []
    while time.time() < deadline:
        events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        if any(e.get("verb") == "get" and (e.get("objectRef") or {}).get("name") == "nope" for e in events):
            break
        time.sleep(0.05)
    created = [e for e in events if e.get("verb") == "create"
               and (e.get("objectRef") or {}).get("resource") == "configmaps"]
    assert created, events
    assert created[0]["user"]["username"] == "kubernetes-admin"
    assert created[0]["responseStatus"]["code"] == 201
    assert created[0]["objectRef"]["resource"] == "configmaps"
    missing = [e for e in events if e.get("verb") == "get" and (e.get("objectRef") or {}).get("name") == "nope"]
    assert missing and missing[0]["responseStatus"]["code"] == 404


def test_the_audit_log_is_created_owner_only(tmp_path):
    """It names every user and request (upstream creates it 0600); the umask would have made it 0644."""
    log = tmp_path / "audit.log"
    with MiniKube(insecure_http=False, controllers=False, audit_log=str(log)) as kube:
        kubectl(kube, "get", "configmaps", "-n", "default")
        kube.server.security.auditor.log.close()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert log.read_text()


def test_audit_log_is_off_by_default(tmp_path):
    with MiniKube(insecure_http=False, controllers=False, data_dir=str(tmp_path / "data")) as kube:
        kubectl(kube, "create", "configmap", "quiet", "-n", "default")
    assert not list(tmp_path.rglob("*audit*"))
