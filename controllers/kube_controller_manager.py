"""kube-controller-manager: the built-in controllers' table, in one place, and the manager that runs them."""

from __future__ import annotations

from typing import Any

from mini_kube.client import ApiClient

from .builtin.accounts import RootCAPublisher, ServiceAccountController
from .builtin.csrsigning import CSRSigningController
from .builtin.endpoints import EndpointsController, EndpointSliceController
from .builtin.endpointslicemirroring import EndpointSliceMirroringController
from .builtin.garbagecollector import GarbageCollector
from .builtin.namespace import NamespaceController
from .builtin.nodelifecycle import NodeLifecycleController
from .builtin.podgc import PodGCController
from .builtin.resourcequota import ResourceQuotaController
from .manager import ControllerTable, Manager
from .workloads.cronjob import CronJobController
from .workloads.daemonset import DaemonSetController
from .workloads.deployment import DeploymentController
from .workloads.disruption import DisruptionController
from .workloads.hpa import HorizontalPodAutoscalerController
from .workloads.job import JobController
from .workloads.replicaset import ReplicaSetController
from .workloads.replicationcontroller import ReplicationControllerController
from .workloads.statefulset import StatefulSetController
from .workloads.ttlafterfinished import TTLAfterFinishedController

CONTROLLERS: ControllerTable = {
    "namespace": NamespaceController,
    "garbagecollector": GarbageCollector,
    "serviceaccount": ServiceAccountController,
    "root-ca-cert-publisher": RootCAPublisher,
    "endpoint": EndpointsController,
    "endpointslice": EndpointSliceController,
    "endpointslicemirroring": EndpointSliceMirroringController,
    "nodelifecycle": NodeLifecycleController,
    "replicaset": ReplicaSetController,
    "replicationcontroller": ReplicationControllerController,
    "deployment": DeploymentController,
    "disruption": DisruptionController,
    "statefulset": StatefulSetController,
    "daemonset": DaemonSetController,
    "podgc": PodGCController,
    "resourcequota": ResourceQuotaController,
    "job": JobController,
    "cronjob": CronJobController,
    "ttl-after-finished": TTLAfterFinishedController,
    "horizontalpodautoscaling": HorizontalPodAutoscalerController,
    "csrsigning": CSRSigningController,
}


class KubeControllerManager(Manager):
    """A manager over the built-in controllers that `names` selects (`*`, `name`, `-name`)."""

    def __init__(self, client: ApiClient, *, names: str = "*", **options: Any) -> None:
        super().__init__(client, table=CONTROLLERS, names=names, **options)
