"""Which fields the apiserver defaults whose value the upstream schema states.

This table only names fields; every value is read from the field's upstream description by
`described.described_default` (a test checks each entry yields one). The entries mirror the
`SetDefaults_*` functions of k8s.io/kubernetes `pkg/apis/<group>/<version>/defaults.go` (and the
declarative `+default` markers of k8s.io/api), which decide *which* fields a server fills in: many
descriptions also mention defaults that only clients or the kubelet apply, so descriptions alone
cannot say that.

Keys are definitions; a path may cross into nested structs that Go always allocates (`spec`,
`spec.strategy`); those are created when missing. Defaults keyed on a kind (`Job`) apply to that kind
only, not to the same nested type elsewhere (a CronJob's job template is not defaulted like a Job).
"""

from __future__ import annotations

_ADM = "io.k8s.api.admissionregistration.v1."
_APPS = "io.k8s.api.apps.v1."
_BATCH = "io.k8s.api.batch.v1."
_CORE = "io.k8s.api.core.v1."
_CRD = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."

DESCRIBED_DEFAULTS: dict[str, tuple[str, ...]] = {
    # apps/v1: SetDefaults_Deployment, _DaemonSet, _StatefulSet, _ReplicaSet
    _APPS + "Deployment": ("spec.replicas", "spec.strategy.type", "spec.revisionHistoryLimit",
                           "spec.progressDeadlineSeconds"),
    _APPS + "RollingUpdateDeployment": ("maxUnavailable", "maxSurge"),
    _APPS + "DaemonSet": ("spec.updateStrategy.type", "spec.revisionHistoryLimit"),
    _APPS + "RollingUpdateDaemonSet": ("maxUnavailable", "maxSurge"),
    _APPS + "StatefulSet": ("spec.podManagementPolicy", "spec.updateStrategy.type", "spec.replicas",
                            "spec.revisionHistoryLimit"),
    _APPS + "RollingUpdateStatefulSetStrategy": ("partition",),
    _APPS + "StatefulSetPersistentVolumeClaimRetentionPolicy": ("whenDeleted", "whenScaled"),
    _APPS + "ReplicaSet": ("spec.replicas",),
    # batch/v1: SetDefaults_Job, SetDefaults_CronJob
    _BATCH + "Job": ("spec.backoffLimit", "spec.completionMode", "spec.suspend"),
    _BATCH + "PodFailurePolicyOnPodConditionsPattern": ("status",),
    _BATCH + "CronJob": ("spec.concurrencyPolicy", "spec.suspend", "spec.successfulJobsHistoryLimit",
                         "spec.failedJobsHistoryLimit"),
    # core/v1: SetDefaults_PodSpec, _Pod, _Container, _Probe, _HTTPGetAction, volume sources, ...
    _CORE + "ReplicationController": ("spec.replicas",),
    _CORE + "PodSpec": ("dnsPolicy", "restartPolicy", "securityContext", "terminationGracePeriodSeconds"),
    _CORE + "Pod": ("spec.enableServiceLinks",),
    _CORE + "Container": ("terminationMessagePath", "terminationMessagePolicy"),
    _CORE + "EphemeralContainer": ("terminationMessagePath", "terminationMessagePolicy"),
    _CORE + "ContainerPort": ("protocol",),
    _CORE + "Probe": ("timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"),
    _CORE + "HTTPGetAction": ("scheme",),
    _CORE + "SecretVolumeSource": ("defaultMode",),
    _CORE + "ConfigMapVolumeSource": ("defaultMode",),
    _CORE + "DownwardAPIVolumeSource": ("defaultMode",),
    _CORE + "ServiceAccountTokenProjection": ("expirationSeconds",),
    _CORE + "ObjectFieldSelector": ("apiVersion",),
    _CORE + "HostPathVolumeSource": ("type",),
    _CORE + "PersistentVolumeClaimSpec": ("volumeMode",),
    _CORE + "PersistentVolumeSpec": ("volumeMode",),
    _CORE + "Service": ("spec.type", "spec.sessionAffinity"),
    _CORE + "ServicePort": ("protocol",),
    _CORE + "EndpointPort": ("protocol",),
    # discovery/v1: SetDefaults_EndpointPort
    "io.k8s.api.discovery.v1.EndpointPort": ("name", "protocol"),
    # admissionregistration/v1: SetDefaults_ValidatingWebhook, _MutatingWebhook, _Rule,
    # _ServiceReference, and the ValidatingAdmissionPolicy defaults
    _ADM + "ValidatingWebhook": ("failurePolicy", "matchPolicy", "namespaceSelector", "objectSelector",
                                 "timeoutSeconds"),
    _ADM + "MutatingWebhook": ("failurePolicy", "matchPolicy", "namespaceSelector", "objectSelector",
                               "timeoutSeconds", "reinvocationPolicy"),
    _ADM + "RuleWithOperations": ("scope",),
    _ADM + "NamedRuleWithOperations": ("scope",),
    _ADM + "ServiceReference": ("port",),
    _ADM + "ValidatingAdmissionPolicySpec": ("failurePolicy",),
    _ADM + "MatchResources": ("matchPolicy", "namespaceSelector", "objectSelector"),
    # networking/v1: SetDefaults_NetworkPolicyPort, SetDefaults_IngressClass
    "io.k8s.api.networking.v1.NetworkPolicyPort": ("protocol",),
    "io.k8s.api.networking.v1.IngressClassParametersReference": ("scope",),
    # storage/v1: SetDefaults_StorageClass, SetDefaults_CSIDriver
    "io.k8s.api.storage.v1.StorageClass": ("reclaimPolicy",),
    "io.k8s.api.storage.v1.CSIDriver": ("spec.podInfoOnMount", "spec.requiresRepublish",
                                        "spec.fsGroupPolicy"),
    # scheduling/v1: SetDefaults_PriorityClass
    "io.k8s.api.scheduling.v1.PriorityClass": ("preemptionPolicy",),
    # autoscaling/v1 and v2: SetDefaults_HorizontalPodAutoscaler
    "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler": ("spec.minReplicas",),
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler": ("spec.minReplicas",),
    # apiextensions/v1: SetDefaults_ServiceReference
    _CRD + "ServiceReference": ("port",),
}
