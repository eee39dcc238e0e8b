"""How to run one API server: what `mini-kube serve` and the test cluster fill in, read once by the assembly."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .registry.cache import HISTORY_EVENTS


@dataclass
class ServerConfig:
    """How to run one API server."""

    address: str = "127.0.0.1"
    port: int = 6443
    data_dir: str = ":memory:"
    insecure_http: bool = False
    token_auth_file: str | None = None
    audit_log: str | None = None
    admission_control_config_file: str | None = None  # an AdmissionConfiguration (PodSecurity's settings)
    service_cidr: str = "10.0.0.0/24"
    node_port_range: tuple[int, int] = (30000, 32767)
    watch_history: int = HISTORY_EVENTS  # recent events the cache keeps for watches from a past revision
    request_header_timeout: float = 32.0  # a connection's first request headers must arrive within this
    idle_timeout: float = 90.0  # idle kept-alive connections are closed after this
    max_requests_inflight: int = 400  # non-mutating requests being served at once (429 beyond), as upstream
    max_mutating_requests_inflight: int = 200
    require_default_service_account: bool = False  # ServiceAccount admission: the `default` account must exist
    etcd_servers: list[str] = field(default_factory=list)  # keep objects in etcd instead of SQLite
    etcd_prefix: str = "/registry"
    etcd_cafile: str | None = None
    etcd_certfile: str | None = None
    etcd_keyfile: str | None = None

    @property
    def store_path(self) -> str:
        if self.data_dir == ":memory:":
            return ":memory:"
        return str(Path(self.data_dir).expanduser() / "state.db")
