"""Table column definitions of the built-in kinds, as data: name, type, description, priority, format.

Descriptions are either literal text or a `Doc` reference resolved from the API definitions, exactly as
upstream's printers fill them. The server always prints wide, so priority-1 columns carry cells too.
"""

from __future__ import annotations

from dataclasses import dataclass

from mini_kube.apiserver.printers.docs import AGE_DOC, NAME_DOC, Doc, describe


@dataclass(frozen=True, slots=True)
class Column:
    """One column definition of a Table."""

    name: str
    type: str
    description: str | Doc
    priority: int = 0
    format: str = ""

    def as_dict(self) -> dict:
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": describe(self.description), "priority": self.priority}


def _s(name: str, description: str | Doc, priority: int = 0) -> Column:
    return Column(name, "string", description, priority)


def _i(name: str, description: str | Doc, priority: int = 0) -> Column:
    return Column(name, "integer", description, priority)


def _b(name: str, description: str | Doc, priority: int = 0) -> Column:
    return Column(name, "boolean", description, priority)


def _d(ref: str) -> Doc:
    return Doc(ref)


NAME = Column("Name", "string", NAME_DOC, 0, "name")
AGE = _s("Age", AGE_DOC)
CONTAINERS = _s("Containers", "Names of each container in the template.", 1)
IMAGES = _s("Images", "Images referenced by each container in the template.", 1)
EXT = "extensions/v1beta1."
READY_PODS = "Number of the pod with ready state"
WEBHOOKS = _i("Webhooks", "Webhooks indicates the number of webhooks registered in this configuration")

POD = (NAME, _s("Ready", "The aggregate readiness state of this pod for accepting traffic."),
       _s("Status", "The aggregate status of the containers in this pod."),
       _s("Restarts", "The number of times the containers in this pod have been restarted and when the last "
                      "container in this pod has restarted."), AGE,
       _s("IP", _d("core/v1.PodStatus.podIP"), 1), _s("Node", _d("core/v1.PodSpec.nodeName"), 1),
       _s("Nominated Node", _d("core/v1.PodStatus.nominatedNodeName"), 1),
       _s("Readiness Gates", _d("core/v1.PodSpec.readinessGates"), 1))
POD_TEMPLATE = (NAME, _s("Containers", "Names of each container in the template."),
                _s("Images", "Images referenced by each container in the template."),
                _s("Pod Labels", "The labels for the pod template."))
POD_DISRUPTION_BUDGET = (NAME, _s("Min Available", "The minimum number of pods that must be available."),
                         _s("Max Unavailable", "The maximum number of pods that may be unavailable."),
                         _i("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time."),
                         AGE)
REPLICATION_CONTROLLER = (NAME, _i("Desired", _d("core/v1.ReplicationControllerSpec.replicas")),
                          _i("Current", _d("core/v1.ReplicationControllerStatus.replicas")),
                          _i("Ready", _d("core/v1.ReplicationControllerStatus.readyReplicas")), AGE, CONTAINERS,
                          IMAGES, _s("Selector", _d("core/v1.ReplicationControllerSpec.selector"), 1))
REPLICA_SET = (NAME, _i("Desired", _d(EXT + "ReplicaSetSpec.replicas")),
               _i("Current", _d(EXT + "ReplicaSetStatus.replicas")),
               _i("Ready", _d(EXT + "ReplicaSetStatus.readyReplicas")), AGE, CONTAINERS, IMAGES,
               _s("Selector", _d(EXT + "ReplicaSetSpec.selector"), 1))
DAEMON_SET = (NAME, _i("Desired", _d(EXT + "DaemonSetStatus.desiredNumberScheduled")),
              _i("Current", _d(EXT + "DaemonSetStatus.currentNumberScheduled")),
              _i("Ready", _d(EXT + "DaemonSetStatus.numberReady")),
              _i("Up-to-date", _d(EXT + "DaemonSetStatus.updatedNumberScheduled")),
              _i("Available", _d(EXT + "DaemonSetStatus.numberAvailable")),
              _s("Node Selector", _d("core/v1.PodSpec.nodeSelector")), AGE, CONTAINERS, IMAGES,
              _s("Selector", _d(EXT + "DaemonSetSpec.selector"), 1))
JOB = (NAME, _s("Status", "Status of the job."), _s("Completions", _d("batch/v1.JobStatus.succeeded")),
       _s("Duration", "Time required to complete the job."), AGE, CONTAINERS, IMAGES,
       _s("Selector", _d("batch/v1.JobSpec.selector"), 1))
CRON_JOB = (NAME, _s("Schedule", _d("batch/v1beta1.CronJobSpec.schedule")),
            _s("Timezone", _d("batch/v1beta1.CronJobSpec.timeZone")),
            _b("Suspend", _d("batch/v1beta1.CronJobSpec.suspend")),
            _i("Active", _d("batch/v1beta1.CronJobStatus.active")),
            _s("Last Schedule", _d("batch/v1beta1.CronJobStatus.lastScheduleTime")), AGE, CONTAINERS, IMAGES,
            _s("Selector", _d("batch/v1.JobSpec.selector"), 1))
SERVICE = (NAME, _s("Type", _d("core/v1.ServiceSpec.type")), _s("Cluster-IP", _d("core/v1.ServiceSpec.clusterIP")),
           _s("External-IP", _d("core/v1.ServiceSpec.externalIPs")), _s("Port(s)", _d("core/v1.ServiceSpec.ports")),
           AGE, _s("Selector", _d("core/v1.ServiceSpec.selector"), 1))
INGRESS = (NAME, _s("Class", "The name of the IngressClass resource that should be used for additional configuration"),
           _s("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
           _s("Address", "Address is a list containing ingress points for the load-balancer"),
           _s("Ports", "Ports of TLS configurations that open"), AGE)
INGRESS_CLASS = (NAME, _s("Controller", "Controller that is responsible for handling this class"),
                 _s("Parameters", "A reference to a resource with additional parameters"), AGE)
STATEFUL_SET = (NAME, _s("Ready", READY_PODS), AGE, CONTAINERS, IMAGES)
ENDPOINTS = (NAME, _s("Endpoints", _d("core/v1.Endpoints.subsets")), AGE)
NODE = (NAME, _s("Status", "The status of the node"), _s("Roles", "The roles of the node"), AGE,
        _s("Version", _d("core/v1.NodeSystemInfo.kubeletVersion")),
        _s("Internal-IP", _d("core/v1.NodeStatus.addresses"), 1),
        _s("External-IP", _d("core/v1.NodeStatus.addresses"), 1),
        _s("OS-Image", _d("core/v1.NodeSystemInfo.osImage"), 1),
        _s("Kernel-Version", _d("core/v1.NodeSystemInfo.kernelVersion"), 1),
        _s("Container-Runtime", _d("core/v1.NodeSystemInfo.containerRuntimeVersion"), 1))
EVENT = (_s("Last Seen", _d("core/v1.Event.lastTimestamp")), _s("Type", _d("core/v1.Event.type")),
         _s("Reason", _d("core/v1.Event.reason")), _s("Object", _d("core/v1.Event.involvedObject")),
         _s("Subobject", _d("core/v1.ObjectReference.fieldPath"), 1), _s("Source", _d("core/v1.Event.source"), 1),
         _s("Message", _d("core/v1.Event.message")), _s("First Seen", _d("core/v1.Event.firstTimestamp"), 1),
         _s("Count", _d("core/v1.Event.count"), 1), Column("Name", "string", NAME_DOC, 1, "name"))
NAMESPACE = (NAME, _s("Status", "The status of the namespace"), AGE)
SECRET = (NAME, _s("Type", _d("core/v1.Secret.type")), _s("Data", _d("core/v1.Secret.data")), AGE)
SERVICE_ACCOUNT = (NAME, _s("Secrets", _d("core/v1.ServiceAccount.secrets")), AGE)
PERSISTENT_VOLUME = (NAME, _s("Capacity", _d("core/v1.PersistentVolumeSpec.capacity")),
                     _s("Access Modes", _d("core/v1.PersistentVolumeSpec.accessModes")),
                     _s("Reclaim Policy", _d("core/v1.PersistentVolumeSpec.persistentVolumeReclaimPolicy")),
                     _s("Status", _d("core/v1.PersistentVolumeStatus.phase")),
                     _s("Claim", _d("core/v1.PersistentVolumeSpec.claimRef")),
                     _s("StorageClass", "StorageClass of the pv"),
                     _s("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
                     _s("Reason", _d("core/v1.PersistentVolumeStatus.reason")), AGE,
                     _s("VolumeMode", _d("core/v1.PersistentVolumeSpec.volumeMode"), 1))
PERSISTENT_VOLUME_CLAIM = (NAME, _s("Status", _d("core/v1.PersistentVolumeClaimStatus.phase")),
                           _s("Volume", _d("core/v1.PersistentVolumeClaimSpec.volumeName")),
                           _s("Capacity", _d("core/v1.PersistentVolumeClaimStatus.capacity")),
                           _s("Access Modes", _d("core/v1.PersistentVolumeClaimStatus.accessModes")),
                           _s("StorageClass", "StorageClass of the pvc"),
                           _s("VolumeAttributesClass", "VolumeAttributesClass of the pvc"), AGE,
                           _s("VolumeMode", _d("core/v1.PersistentVolumeClaimSpec.volumeMode"), 1))
COMPONENT_STATUS = (NAME, _s("Status", "Status of the component conditions"),
                    _s("Message", "Message of the component conditions"),
                    _s("Error", "Error of the component conditions"))
DEPLOYMENT = (NAME, _s("Ready", READY_PODS), _s("Up-to-date", _d(EXT + "DeploymentStatus.updatedReplicas")),
              _s("Available", _d(EXT + "DeploymentStatus.availableReplicas")), AGE, CONTAINERS, IMAGES,
              _s("Selector", _d(EXT + "DeploymentSpec.selector"), 1))
_HPA = "autoscaling/v2beta1.HorizontalPodAutoscaler"
HORIZONTAL_POD_AUTOSCALER = (NAME, _s("Reference", _d(_HPA + "Spec.scaleTargetRef")),
                             _s("Targets", _d(_HPA + "Spec.metrics")), _s("MinPods", _d(_HPA + "Spec.minReplicas")),
                             _s("MaxPods", _d(_HPA + "Spec.maxReplicas")),
                             _s("Replicas", _d(_HPA + "Status.currentReplicas")), AGE)
CONFIG_MAP = (NAME, _s("Data", _d("core/v1.ConfigMap.data")), AGE)
SCALE = (NAME, _i("Desired", _d("autoscaling/v1.ScaleSpec.replicas")),
         _i("Available", _d("autoscaling/v1.ScaleStatus.replicas")), AGE)
NETWORK_POLICY = (NAME, _s("Pod-Selector", _d(EXT + "NetworkPolicySpec.podSelector")), AGE)


def _binding(kind: str, what: str) -> tuple[Column, ...]:
    return (NAME, _s("Role", _d(f"rbac/v1beta1.{kind}.roleRef")), AGE, _s("Users", f"Users in the {what}", 1),
            _s("Groups", f"Groups in the {what}", 1), _s("ServiceAccounts", f"ServiceAccounts in the {what}", 1))


ROLE_BINDING = _binding("RoleBinding", "roleBinding")
CLUSTER_ROLE_BINDING = _binding("ClusterRoleBinding", "clusterRoleBinding")
_CSR = "certificates/v1beta1.CertificateSigningRequest"
CERTIFICATE_SIGNING_REQUEST = (NAME, AGE, _s("SignerName", _d(_CSR + "Spec.signerName")),
                               _s("Requestor", _d(_CSR + "Spec.request")),
                               _s("RequestedDuration", _d(_CSR + "Spec.expirationSeconds")),
                               _s("Condition", _d(_CSR + "Status.conditions")))
LEASE = (NAME, _s("Holder", _d("coordination/v1.LeaseSpec.holderIdentity")), AGE)
STORAGE_CLASS = (NAME, _s("Provisioner", _d("storage/v1.StorageClass.provisioner")),
                 _s("ReclaimPolicy", _d("storage/v1.StorageClass.reclaimPolicy")),
                 _s("VolumeBindingMode", _d("storage/v1.StorageClass.volumeBindingMode")),
                 _s("AllowVolumeExpansion", _d("storage/v1.StorageClass.allowVolumeExpansion")), AGE)
CONTROLLER_REVISION = (NAME, _s("Controller", "Controller of the object"),
                       _s("Revision", _d("apps/v1beta1.ControllerRevision.revision")), AGE)
RESOURCE_QUOTA = (NAME, _s("Request", "Request represents a minimum amount of cpu/memory that a container may "
                                      "consume."),
                  _s("Limit", "Limits control the maximum amount of cpu/memory that a container may use "
                              "independent of contention on the node."), AGE)
PRIORITY_CLASS = (NAME, _i("Value", _d("scheduling/v1.PriorityClass.value")),
                  _b("Global-Default", _d("scheduling/v1.PriorityClass.globalDefault")), AGE,
                  _s("PreemptionPolicy", _d("scheduling/v1.PriorityClass.preemptionPolicy")))
RUNTIME_CLASS = (NAME, _s("Handler", _d("meta/v1.ObjectMeta.handler")), AGE)
VOLUME_ATTACHMENT = (NAME, Column("Attacher", "string", _d("storage/v1.VolumeAttachmentSpec.attacher"), 0, "name"),
                     _s("PV", _d("storage/v1.VolumeAttachmentSource.persistentVolumeName")),
                     _s("Node", _d("storage/v1.VolumeAttachmentSpec.nodeName")),
                     _b("Attached", _d("storage/v1.VolumeAttachmentStatus.attached")), AGE)
ENDPOINT_SLICE = (NAME, _s("AddressType", _d("discovery/v1beta1.EndpointSlice.addressType")),
                  _s("Ports", _d("discovery/v1beta1.EndpointSlice.ports")),
                  _s("Endpoints", _d("discovery/v1beta1.EndpointSlice.endpoints")), AGE)
CSI_NODE = (NAME, _i("Drivers", "Drivers indicates the number of CSI drivers registered on the node"), AGE)
_CSI = "storage/v1.CSIDriverSpec."
CSI_DRIVER = (NAME, _b("AttachRequired", _d(_CSI + "attachRequired")), _b("PodInfoOnMount", _d(_CSI + "podInfoOnMount")),
              _b("StorageCapacity", _d(_CSI + "storageCapacity")), _s("TokenRequests", _d(_CSI + "tokenRequests")),
              _b("RequiresRepublish", _d(_CSI + "requiresRepublish")),
              _s("Modes", _d(_CSI + "volumeLifecycleModes")), AGE)
CSI_STORAGE_CAPACITY = (NAME, _s("StorageClassName", _d("storage/v1.CSIStorageCapacity.storageClassName")),
                        _s("Capacity", _d("storage/v1.CSIStorageCapacity.capacity")))
WEBHOOK_CONFIGURATION = (NAME, WEBHOOKS, AGE)
ADMISSION_POLICY = (NAME, _i("Validations", "Validations indicates the number of validation rules defined in this "
                                            "configuration"),
                    _s("ParamKind", "ParamKind specifies the kind of resources used to parameterize this policy"), AGE)
ADMISSION_POLICY_BINDING = (NAME, _s("PolicyName", "PolicyName indicates the policy definition which the policy "
                                                   "binding binded to"),
                            _s("ParamRef", "ParamRef indicates the param resource which sets the configration param"),
                            AGE)
DEFAULT = (NAME, Column("Created At", "date", AGE_DOC))
