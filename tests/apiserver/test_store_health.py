"""With SQLite, /readyz and /livez check that the store can take writes (they said `[+]etcd ok` whatever
happened): while another process holds the database's write lock the `etcd` checks fail, then pass again."""

from __future__ import annotations

import sqlite3
import time
import urllib.error
import urllib.request
from pathlib import Path

from mini_kube.testing import MiniKube


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_readyz_fails_while_the_database_cannot_be_written(tmp_path: Path):
    with MiniKube(data_dir=str(tmp_path / "data"), controllers=False, scheduler=False) as kube:
        assert get(kube.url + "/readyz") == (200, "ok")
        other = sqlite3.connect(tmp_path / "data" / "state.db", isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")  # another process writing, and not letting go
        try:
            time.sleep(1.1)  # the last answer is reused for a second
            status, body = get(kube.url + "/readyz?verbose")
            assert status == 500
            assert body.splitlines()[2:4] == ["[-]etcd failed: reason withheld",
                                              "[-]etcd-readiness failed: reason withheld"]
            assert get(kube.url + "/livez/etcd") == (
                500, "internal server error: the database cannot be written: database is locked\n")
            status, body = get(kube.url + "/livez?exclude=etcd&exclude=nonesuch&verbose")
            assert status == 200 and "[+]etcd excluded: ok\n" in body
            assert 'warn: some health checks cannot be excluded: no matches for "nonesuch"\n' in body
        finally:
            other.execute("ROLLBACK")
            other.close()
        time.sleep(1.1)
        assert get(kube.url + "/readyz") == (200, "ok")
        assert get(kube.url + "/livez/etcd") == (200, "ok")
