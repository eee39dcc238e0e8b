"""Server-side defaulting reads objects back the way a real 1.32 apiserver returns them."""

from __future__ import annotations

import copy

import pytest
from mini_kube.apiserver.schema.default_rules import image_tag
from mini_kube.apiserver.schema.default_table import DESCRIBED_DEFAULTS
from mini_kube.apiserver.schema.defaults import apply_defaults, described_values
from mini_kube.apiserver.schema.described import NO_DEFAULT, described_default, parse_default

APPS = "io.k8s.api.apps.v1."
CORE = "io.k8s.api.core.v1."
TEMPLATE_SPEC_DEFAULTS = {"restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                          "dnsPolicy": "ClusterFirst", "securityContext": {},
                          "schedulerName": "default-scheduler"}
CONTAINER_DEFAULTS = {"resources": {}, "terminationMessagePath": "/dev/termination-log",
                      "terminationMessagePolicy": "File"}


def defaulted(definition: str, obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    apply_defaults(definition, obj)
    return obj


def pod_template(image: str = "nginx:1.27", **spec) -> dict:
    return {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": image}], **spec}}


@pytest.mark.parametrize("definition", sorted(DESCRIBED_DEFAULTS))
def test_every_listed_default_is_stated_upstream(definition):
    assert all(value is not NO_DEFAULT for _, value in described_values(definition))


@pytest.mark.parametrize(("text", "kinds", "value"), [
    ("Number of desired pods. Defaults to 1.", {"integer"}, 1),
    ("The maximum time ... Defaults to 600s.", {"integer"}, 600),
    ("Value can be an absolute number (ex: 5) or a percentage. Defaults to 25%.", {"integer", "string"}, "25%"),
    ("This cannot be 0 if MaxSurge is 0 Default value is 1.", {"integer", "string"}, 1),
    ('Defaults to "Equivalent"', {"string"}, "Equivalent"),
    ("Defaults to 0644.", {"integer"}, 420),
    ("Defaults to 1 hour and must be at least 10 minutes.", {"integer"}, 3600),
    ("Optional: Defaults to empty.  See type description.", {"object"}, {}),
    ('Valid values are: - "Allow" (default): allows CronJobs', {"string"}, "Allow"),
    ("It can be `NonIndexed` (default) or `Indexed`.", {"string"}, "NonIndexed"),
    ("The default policy is `OrderedReady`, where pods", {"string"}, "OrderedReady"),
    ('Default is "true".', {"boolean"}, True),
    ("Indicates that the deployment is paused.", {"boolean"}, NO_DEFAULT),
])
def test_parse_default_sentences(text, kinds, value):
    assert parse_default(text, kinds) == value


def test_values_come_from_the_upstream_descriptions():
    assert described_default(APPS + "DeploymentSpec", "progressDeadlineSeconds") == 600
    assert described_default("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "timeoutSeconds") == 10
    assert described_default(CORE + "ConfigMapVolumeSource", "defaultMode") == 420


def test_deployment_reads_back_like_kubectl_get_yaml():
    obj = defaulted(APPS + "Deployment", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "demo"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                     {"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]}}}})
    assert obj["spec"] == {
        "replicas": 2, "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
        "template": {"metadata": {"creationTimestamp": None, "labels": {"app": "web"}}, "spec": {
            **TEMPLATE_SPEC_DEFAULTS,
            "containers": [{"name": "nginx", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}], **CONTAINER_DEFAULTS}]}}}
    assert obj["status"] == {}


def test_explicit_values_and_zero_replicas_are_kept():
    obj = defaulted(APPS + "Deployment", {"spec": {
        "replicas": 0, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
        "template": pod_template()}})
    assert obj["spec"]["replicas"] == 0
    assert obj["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": "25%"}


def test_recreate_strategy_gets_no_rolling_update():
    obj = defaulted(APPS + "Deployment", {"spec": {"strategy": {"type": "Recreate"}, "template": pod_template()}})
    assert obj["spec"]["strategy"] == {"type": "Recreate"}
    assert obj["spec"]["replicas"] == 1


@pytest.mark.parametrize(("image", "policy"), [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.25", "IfNotPresent"),
    ("localhost:5000/nginx", "Always"), ("localhost:5000/nginx:v1", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"), ("busybox", "Always"),
])
def test_image_pull_policy_follows_the_tag(image, policy):
    pod = defaulted(CORE + "Pod", {"spec": {"containers": [{"name": "c", "image": image}]}})
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_image_tag_parsing():
    assert image_tag("registry.example.com:443/team/app:2.0") == "2.0"
    assert image_tag("registry.example.com:443/team/app") == "latest"


def test_pod_probes_volumes_env_and_requests():
    pod = defaulted(CORE + "Pod", {"spec": {
        "terminationGracePeriodSeconds": 10,
        "containers": [{
            "name": "c", "image": "nginx:1.25",
            "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "250m"}},
            "readinessProbe": {"httpGet": {"port": "http"}, "periodSeconds": 5},
            "livenessProbe": {"tcpSocket": {"port": 80}, "timeoutSeconds": 0},
        }],
        "volumes": [{"name": "cfg", "configMap": {"name": "cm1"}}, {"name": "scratch"},
                    {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}],
    }})
    spec = pod["spec"]
    c = spec["containers"][0]
    assert spec["terminationGracePeriodSeconds"] == 10
    assert spec["enableServiceLinks"] is True
    assert c["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}
    assert c["resources"]["requests"] == {"cpu": "250m", "memory": "1Gi"}
    assert c["readinessProbe"] == {"httpGet": {"port": "http", "path": "/", "scheme": "HTTP"}, "periodSeconds": 5,
                                   "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}
    assert c["livenessProbe"]["timeoutSeconds"] == 1
    assert spec["volumes"][0]["configMap"] == {"name": "cm1", "defaultMode": 420}
    assert spec["volumes"][1] == {"name": "scratch", "emptyDir": {}}
    assert spec["volumes"][2]["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]}
    assert pod["status"] == {}


def test_pod_template_does_not_get_pod_only_defaults():
    rs = defaulted(APPS + "ReplicaSet", {"spec": {"template": pod_template(
        containers=[{"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1"}}}])}})
    spec = rs["spec"]["template"]["spec"]
    assert "enableServiceLinks" not in spec
    assert spec["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
    assert rs["spec"]["replicas"] == 1


def test_service_defaults_by_type():
    lb = defaulted(CORE + "Service", {"spec": {"type": "LoadBalancer", "selector": {"app": "web"},
                                               "ports": [{"name": "http", "port": 80, "targetPort": 80}]}})
    assert lb["spec"] == {
        "type": "LoadBalancer", "selector": {"app": "web"}, "allocateLoadBalancerNodePorts": True,
        "externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
        "ports": [{"name": "http", "port": 80, "targetPort": 80, "protocol": "TCP"}]}
    assert lb["status"] == {"loadBalancer": {}}
    plain = defaulted(CORE + "Service", {"spec": {"ports": [{"port": 8080}, {"port": 53, "protocol": "UDP"}]}})
    assert plain["spec"]["type"] == "ClusterIP"
    assert plain["spec"]["ports"] == [{"port": 8080, "targetPort": 8080, "protocol": "TCP"},
                                      {"port": 53, "targetPort": 53, "protocol": "UDP"}]
    assert "externalTrafficPolicy" not in plain["spec"]
    external = defaulted(CORE + "Service", {"spec": {"type": "ExternalName", "externalName": "x.example"}})
    assert "ipFamilies" not in external["spec"] and "internalTrafficPolicy" not in external["spec"]
    sticky = defaulted(CORE + "Service", {"spec": {"sessionAffinity": "ClientIP", "ports": [{"port": 1}]}})
    assert sticky["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


def test_workload_kinds():
    ds = defaulted(APPS + "DaemonSet", {"spec": {"template": pod_template("nginx")}})
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert ds["status"] == {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                            "desiredNumberScheduled": 0, "numberReady": 0}
    sts = defaulted(APPS + "StatefulSet", {"spec": {"serviceName": "s", "template": pod_template(),
                                                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}})
    spec = sts["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["volumeClaimTemplates"] == [{
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "creationTimestamp": None},
        "spec": {"volumeMode": "Filesystem", "resources": {}}, "status": {"phase": "Pending"}}]
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    on_delete = defaulted(APPS + "StatefulSet", {"spec": {"updateStrategy": {"type": "OnDelete"}}})
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_job_and_cronjob():
    job = defaulted("io.k8s.api.batch.v1.Job", {"metadata": {"name": "j"}, "spec": {
        "backoffLimit": 2, "template": pod_template("busybox", restartPolicy="Never")}})
    assert {k: v for k, v in job["spec"].items() if k != "template"} == {
        "backoffLimit": 2, "completions": 1, "parallelism": 1, "completionMode": "NonIndexed",
        "suspend": False, "podReplacementPolicy": "TerminatingOrFailed"}
    assert job["metadata"]["labels"] == {"app": "web"}
    cron = defaulted("io.k8s.api.batch.v1.CronJob", {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {
        "spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}})
    assert cron["spec"]["concurrencyPolicy"] == "Allow"
    assert (cron["spec"]["successfulJobsHistoryLimit"], cron["spec"]["failedJobsHistoryLimit"]) == (3, 1)
    job_template = cron["spec"]["jobTemplate"]
    assert job_template["metadata"] == {"creationTimestamp": None}
    assert set(job_template["spec"]) == {"template"}  # a job template is not defaulted like a Job
    assert job_template["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_small_kinds():
    assert defaulted(CORE + "Secret", {"stringData": {"password": "hunter2"}}) == {
        "metadata": {}, "type": "Opaque", "data": {"password": "aHVudGVyMg=="}}
    ns = defaulted(CORE + "Namespace", {"metadata": {"name": "pb", "labels": {"team": "a"}}})
    assert ns["metadata"]["labels"] == {"team": "a", "kubernetes.io/metadata.name": "pb"}
    assert ns["status"] == {"phase": "Active"}
    assert defaulted(CORE + "ConfigMap", {"metadata": {"name": "c"}}) == {"metadata": {"name": "c"}}
    eps = defaulted("io.k8s.api.discovery.v1.EndpointSlice", {"ports": [{"port": 80}]})
    assert eps["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}]
    rb = defaulted("io.k8s.api.rbac.v1.RoleBinding", {"roleRef": {"kind": "Role", "name": "r"}, "subjects": [
        {"kind": "ServiceAccount", "name": "sa"}, {"kind": "User", "name": "alice"}]})
    assert rb["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert rb["subjects"] == [{"kind": "ServiceAccount", "name": "sa"},
                              {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]
    pdb = defaulted("io.k8s.api.policy.v1.PodDisruptionBudget", {"spec": {"minAvailable": "50%"}})
    assert pdb["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


def test_webhook_configuration():
    vwc = defaulted("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration", {"webhooks": [{
        "name": "v.example.com", "clientConfig": {"service": {"name": "s", "namespace": "n"}},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"]}]})
    hook = vwc["webhooks"][0]
    assert hook["failurePolicy"] == "Fail" and hook["matchPolicy"] == "Equivalent"
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}
    assert hook["timeoutSeconds"] == 10
    assert hook["rules"][0]["scope"] == "*"
    assert hook["clientConfig"]["service"]["port"] == 443
    mwc = defaulted("io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
                    {"webhooks": [{"name": "m", "clientConfig": {"url": "https://x"}}]})
    assert mwc["webhooks"][0]["reinvocationPolicy"] == "Never"


def test_events_and_nodes_carry_go_zero_values():
    ev = defaulted(CORE + "Event", {"metadata": {"name": "e"}, "reason": "R"})
    assert (ev["source"], ev["firstTimestamp"], ev["lastTimestamp"], ev["eventTime"]) == ({}, None, None, None)
    node = defaulted(CORE + "Node", {"metadata": {"name": "n1"}, "spec": {"podCIDR": "10.244.0.0/24"}})
    assert node["spec"]["podCIDRs"] == ["10.244.0.0/24"]
    assert node["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
    assert node["status"]["nodeInfo"]["kubeletVersion"] == ""


def test_crd_names_and_conversion():
    crd = defaulted("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition", {
        "spec": {"group": "example.com", "names": {"kind": "Agent", "plural": "agents"}, "scope": "Namespaced",
                 "versions": [{"name": "v1", "served": True, "storage": True}]}})
    assert crd["spec"]["names"] == {"kind": "Agent", "plural": "agents", "singular": "agent", "listKind": "AgentList"}
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"]["storedVersions"] == ["v1"]


def test_defaulting_is_idempotent_and_ignores_bad_types():
    once = defaulted(APPS + "Deployment", {"spec": {"template": pod_template()}})
    assert defaulted(APPS + "Deployment", once) == once
    odd = defaulted(APPS + "Deployment", {"spec": {"strategy": "fast", "template": {"spec": {"containers": "x"}}}})
    assert odd["spec"]["strategy"] == "fast" and odd["spec"]["template"]["spec"]["containers"] == "x"
    unknown = {"spec": {}}
    apply_defaults("io.example.v1.Agent", unknown)
    assert unknown == {"spec": {}}


# Fields of the real server's answers that other layers fill in: admission plugins (service account,
# priority, default tolerations), the Service IP/port allocators, the Job and Namespace strategies,
# the Pod strategy (status), the CRD controller (status).
OTHER_LAYERS = {
    "Namespace": {"spec.finalizers"},
    "DaemonSet": {"metadata.annotations"},
    "Pod": {"spec.serviceAccountName", "spec.serviceAccount", "spec.priority", "spec.preemptionPolicy",
            "spec.tolerations", "spec.volumes", "spec.containers[0].volumeMounts", "status.phase",
            "status.qosClass"},
    "Service": {"spec.clusterIP", "spec.clusterIPs", "spec.ports[0].nodePort", "spec.ports[1].nodePort"},
    "Job": {"metadata.labels", "spec.selector", "spec.manualSelector", "spec.template.metadata.labels"},
    "CustomResourceDefinition": {"status.conditions", "status.acceptedNames"},
}
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _differences(got, want, path=""):
    if isinstance(got, dict) and isinstance(want, dict):
        for key in got.keys() | want.keys():
            sub = f"{path}.{key}" if path else key
            if key not in got or key not in want:
                yield sub
            else:
                yield from _differences(got[key], want[key], sub)
    elif isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            yield from _differences(a, b, f"{path}[{i}]")
    elif got != want:
        yield path


def test_every_reference_object_reads_back_like_the_real_server():
    import json

    import yaml
    from mini_kube.apiserver.schema.definitions import definition_name

    from tests.helpers import REFERENCE

    source = REFERENCE / "protobuf" / "objects.yaml"
    files = {"Event": "event-events-v1", "CustomResourceDefinition": "crd"}
    checked = 0
    for sent in yaml.safe_load_all(source.read_text()):
        group, _, version = sent["apiVersion"].rpartition("/")
        got = defaulted(definition_name(group, version, sent["kind"]), sent)
        want = json.loads((REFERENCE / "protobuf" / f"{files.get(sent['kind'], sent['kind'].lower())}.json").read_text())
        for key in SERVER_METADATA:
            want["metadata"].pop(key, None)
        want["metadata"]["annotations"].pop(LAST_APPLIED)
        if not want["metadata"]["annotations"]:
            del want["metadata"]["annotations"]
        allowed = OTHER_LAYERS.get(sent["kind"], set())
        unexpected = {d for d in _differences(got, want)
                      if not any(d == a or d.startswith((a + ".", a + "[")) for a in allowed)}
        assert unexpected == set(), sent["kind"]
        checked += 1
    assert checked >= 20
