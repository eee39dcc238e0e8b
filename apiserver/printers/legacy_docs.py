"""Column descriptions of printer columns whose upstream text comes from API versions no longer served.

The real server describes some columns with the doc strings of old API versions (extensions/v1beta1,
batch/v1beta1, ...). Those versions are absent from the 1.32 definitions, so their strings are kept here as
wire data, keyed `group/version.Type.field`.
"""

LEGACY_DOCS: dict[str, str] = {
    "extensions/v1beta1.ReplicaSetSpec.replicas": (
        "Replicas is the number of desired replicas. This is a pointer to distinguish between "
        "explicit zero and unspecified. Defaults to 1. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-"
        "replicationcontroller"
    ),
    "extensions/v1beta1.ReplicaSetSpec.selector": (
        "Selector is a label query over pods that should match the replica count. If the selector "
        "is empty, it is defaulted to the labels present on the pod template. Label keys and "
        "values that must match in order to be controlled by this replica set. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
    ),
    "extensions/v1beta1.ReplicaSetStatus.replicas": (
        "Replicas is the most recently observed number of replicas. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-"
        "replicationcontroller"
    ),
    "extensions/v1beta1.ReplicaSetStatus.readyReplicas": (
        "The number of ready replicas for this replica set."
    ),
    "extensions/v1beta1.DaemonSetStatus.desiredNumberScheduled": (
        "The total number of nodes that should be running the daemon pod (including nodes "
        "correctly running the daemon pod). More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
    ),
    "extensions/v1beta1.DaemonSetStatus.currentNumberScheduled": (
        "The number of nodes that are running at least 1 daemon pod and are supposed to run the "
        "daemon pod. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
    ),
    "extensions/v1beta1.DaemonSetStatus.numberReady": (
        "The number of nodes that should be running the daemon pod and have one or more of the "
        "daemon pod running and ready."
    ),
    "extensions/v1beta1.DaemonSetStatus.updatedNumberScheduled": (
        "The total number of nodes that are running updated daemon pod"
    ),
    "extensions/v1beta1.DaemonSetStatus.numberAvailable": (
        "The number of nodes that should be running the daemon pod and have one or more of the "
        "daemon pod running and available (ready for at least spec.minReadySeconds)"
    ),
    "extensions/v1beta1.DaemonSetSpec.selector": (
        "A label query over pods that are managed by the daemon set. Must match in order to be "
        "controlled. If empty, defaulted to labels on Pod template. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
    ),
    "extensions/v1beta1.DeploymentStatus.updatedReplicas": (
        "Total number of non-terminated pods targeted by this deployment that have the desired "
        "template spec."
    ),
    "extensions/v1beta1.DeploymentStatus.availableReplicas": (
        "Total number of available pods (ready for at least minReadySeconds) targeted by this "
        "deployment."
    ),
    "extensions/v1beta1.DeploymentSpec.selector": (
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
        "ones affected by this deployment."
    ),
    "extensions/v1beta1.NetworkPolicySpec.podSelector": (
        "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules "
        "is applied to any pods selected by this field. Multiple network policies can select the "
        "same set of pods.  In this case, the ingress rules for each are combined additively. This "
        "field is NOT optional and follows standard label selector semantics. An empty podSelector "
        "matches all pods in this namespace."
    ),
    "apps/v1beta1.ControllerRevision.revision": (
        "revision indicates the revision of the state represented by Data."
    ),
    "batch/v1beta1.CronJobSpec.schedule": (
        "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."
    ),
    "batch/v1beta1.CronJobSpec.timeZone": (
        "The time zone name for the given schedule, see "
        "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will "
        "default to the time zone of the kube-controller-manager process. The set of valid time "
        "zone names and the time zone offset is loaded from the system-wide time zone database by "
        "the API server during CronJob validation and the controller manager during execution. If "
        "no system-wide time zone database can be found a bundled version of the database is used "
        "instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to "
        "a change in host configuration, the controller will stop creating new new Jobs and will "
        "create a system event with the reason UnknownTimeZone. More information can be found in "
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"
    ),
    "batch/v1beta1.CronJobSpec.suspend": (
        "This flag tells the controller to suspend subsequent executions, it does not apply to "
        "already started executions.  Defaults to false."
    ),
    "batch/v1beta1.CronJobStatus.active": (
        "A list of pointers to currently running jobs."
    ),
    "batch/v1beta1.CronJobStatus.lastScheduleTime": (
        "Information when was the last time the job was successfully scheduled."
    ),
    "autoscaling/v2beta1.HorizontalPodAutoscalerSpec.scaleTargetRef": (
        "scaleTargetRef points to the target resource to scale, and is used to the pods for which "
        "metrics should be collected, as well as to actually change the replica count."
    ),
    "autoscaling/v2beta1.HorizontalPodAutoscalerSpec.metrics": (
        "metrics contains the specifications for which to use to calculate the desired replica "
        "count (the maximum replica count across all metrics will be used).  The desired replica "
        "count is calculated multiplying the ratio between the target value and the current value "
        "by the current number of pods.  Ergo, metrics used must decrease as the pod count is "
        "increased, and vice-versa.  See the individual metric source types for more information "
        "about how each type of metric must respond."
    ),
    "autoscaling/v2beta1.HorizontalPodAutoscalerSpec.minReplicas": (
        "minReplicas is the lower limit for the number of replicas to which the autoscaler can "
        "scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature "
        "gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  "
        "Scaling is active as long as at least one metric value is available."
    ),
    "autoscaling/v2beta1.HorizontalPodAutoscalerSpec.maxReplicas": (
        "maxReplicas is the upper limit for the number of replicas to which the autoscaler can "
        "scale up. It cannot be less that minReplicas."
    ),
    "autoscaling/v2beta1.HorizontalPodAutoscalerStatus.currentReplicas": (
        "currentReplicas is current number of replicas of pods managed by this autoscaler, as last "
        "seen by the autoscaler."
    ),
    "rbac/v1beta1.RoleBinding.roleRef": (
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
        "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
    ),
    "rbac/v1beta1.ClusterRoleBinding.roleRef": (
        "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot "
        "be resolved, the Authorizer must return an error."
    ),
    "certificates/v1beta1.CertificateSigningRequestSpec.signerName": (
        "Requested signer for the request. It is a qualified name in the form: "
        "`scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client "
        "certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If "
        "it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n "
        "3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for "
        "signers happens out of band. You can select on this field using `spec.signerName`."
    ),
    "certificates/v1beta1.CertificateSigningRequestSpec.request": (
        "Base64-encoded PKCS#10 CSR data"
    ),
    "certificates/v1beta1.CertificateSigningRequestSpec.expirationSeconds": (
        "expirationSeconds is the requested duration of validity of the issued certificate. The "
        "certificate signer may issue a certificate with a different validity duration so a client "
        "must check the delta between the notBefore and and notAfter fields in the issued "
        "certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the "
        "well-known Kubernetes signers will honor this field as long as the requested duration is "
        "not greater than the maximum duration they will honor per the --cluster-signing-duration "
        "CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this "
        "field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the "
        "in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is "
        "shorter than the requested duration\n  3. Signer whose configured minimum is longer than "
        "the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 "
        "minutes."
    ),
    "certificates/v1beta1.CertificateSigningRequestStatus.conditions": (
        "Conditions applied to the request, such as approval or denial."
    ),
    "discovery/v1beta1.EndpointSlice.addressType": (
        "addressType specifies the type of address carried by this EndpointSlice. All addresses in "
        "this slice must be the same type. This field is immutable after creation. The following "
        "address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: "
        "Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name."
    ),
    "discovery/v1beta1.EndpointSlice.ports": (
        "ports specifies the list of network ports exposed by each endpoint in this slice. Each "
        "port must have a unique name. When ports is empty, it indicates that there are no defined "
        "ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice "
        "may include a maximum of 100 ports."
    ),
    "discovery/v1beta1.EndpointSlice.endpoints": (
        "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum "
        "of 1000 endpoints."
    ),
}
