"""The Agent operator's resources, labels and names."""

from __future__ import annotations

from mini_kube.client import ResourceRef

GROUP = "mini-kube.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

AGENTS = ResourceRef(GROUP, VERSION, "agents")
SERVING_RUNTIMES = ResourceRef(GROUP, VERSION, "servingruntimes")
CLUSTER_SERVING_RUNTIMES = ResourceRef(GROUP, VERSION, "clusterservingruntimes", namespaced=False)

FIELD_MANAGER = "agent-operator"
"""The server-side apply field manager of everything the operator writes."""
COMPONENT = "agent-operator"
LEASE_NAME = "agent-operator"

AGENT_LABEL = f"{GROUP}/agent"
"""On every child and pod: the Agent's name (the pods' selector)."""
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_SELECTOR = f"{MANAGED_BY}={COMPONENT}"
APPLIED_HASH = f"{GROUP}/applied-hash"
"""On every child: a hash of what the operator last applied (a changed intent is applied even if live is a
superset of it, so that fields the operator stopped setting are removed)."""
CONFIG_HASH = f"{GROUP}/config-hash"
"""On the pod template: a hash of the agent's config, so a config change rolls the pods."""

CONFIG_DIR = "/etc/agent/config"
CONFIG_ENV_PREFIX = "AGENT_CONFIG_"
PORT_NAME = "http"
CONTAINER_NAME = "agent"
CLUSTER_DOMAIN = "cluster.local"

# condition types and reasons
READY, PROGRESSING, RUNTIME_RESOLVED = "Ready", "Progressing", "RuntimeResolved"
RUNTIME_NOT_FOUND = "RuntimeNotFound"
CONFIGMAP_NOT_FOUND = "ConfigMapNotFound"
APPLY_FAILED = "ApplyFailed"


def config_map_name(agent_name: str) -> str:
    return f"{agent_name}-config"
