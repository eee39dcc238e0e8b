"""Per-kind rules that users hit, as create/update cases with the exact messages (upstream's, restated)."""

from __future__ import annotations

import base64
import copy

import pytest
from mini_kube.apiserver.validation import validate_all as validate

META = {"name": "x", "namespace": "ns"}
POD_SPEC = {"containers": [{"name": "app", "image": "nginx"}]}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC}


def errors(kind: str, group: str, obj: dict, old: dict | None = None) -> list[str]:
    return [str(e) for e in validate(kind, group, {"metadata": dict(META), **obj} if "metadata" not in obj else obj,
                                     old)]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
                  "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


@pytest.mark.parametrize(("obj", "expected"), [
    ({"data": {"good.key": "v"}}, []),
    ({"data": {"bad key": "v"}}, [f'data[bad key]: Invalid value: "bad key": {CONFIG_KEY_MSG}']),
    ({"data": {"k": "v"}, "binaryData": {"k": b64("v")}}, [
        'data[k]: Invalid value: "k": duplicate of key present in binaryData']),
    ({"binaryData": {"..x": b64("v")}}, ['binaryData[..x]: Invalid value: "..x": must not start with \'..\'']),
    ({"data": {"big": "x" * (1024 * 1024 + 1)}}, [": Too long: may not be more than 1048576 bytes"]),
])
def test_config_maps(obj, expected):
    assert errors("ConfigMap", "", obj) == expected


def test_immutable_config_map_cannot_change():
    old = {"metadata": {**META, "resourceVersion": "1"}, "data": {"a": "1"}, "immutable": True}
    new = {**copy.deepcopy(old), "data": {"a": "2"}, "immutable": False}
    assert errors("ConfigMap", "", new, old) == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set"]


@pytest.mark.parametrize(("obj", "expected"), [
    ({"type": "Opaque", "data": {"a": b64("1")}}, []),
    ({"stringData": {"bad/key": "v"}}, [
        f'data[bad/key]: Invalid value: "bad/key": {CONFIG_KEY_MSG}']),
    ({"type": "kubernetes.io/tls", "data": {"tls.crt": b64("c")}}, ["data[tls.key]: Required value"]),
    ({"type": "kubernetes.io/basic-auth"}, ["data[username]: Required value", "data[password]: Required value"]),
    ({"type": "kubernetes.io/basic-auth", "stringData": {"password": "p"}}, []),
    ({"type": "kubernetes.io/ssh-auth"}, ["data[ssh-privatekey]: Required value"]),
    ({"type": "kubernetes.io/dockerconfigjson"}, ["data[.dockerconfigjson]: Required value"]),
    ({"type": "kubernetes.io/service-account-token"}, [
        "metadata.annotations[kubernetes.io/service-account.name]: Required value"]),
    ({"type": "example.com/custom", "data": {"x": b64("y")}}, []),
])
def test_secrets(obj, expected):
    assert errors("Secret", "", obj) == expected


def test_secret_type_is_immutable():
    old = {"metadata": {**META, "resourceVersion": "1"}, "type": "Opaque"}
    new = {**old, "type": "kubernetes.io/basic-auth", "stringData": {"username": "u"}}
    assert errors("Secret", "", new, old) == ['type: Invalid value: "kubernetes.io/basic-auth": field is immutable']


def _pod(**spec) -> dict:
    return {"spec": {**copy.deepcopy(POD_SPEC), **spec}}


def _ctr(**fields) -> dict:
    return _pod(containers=[{"name": "app", "image": "nginx", **fields}])


@pytest.mark.parametrize(("obj", "expected"), [
    (_pod(), []),
    (_pod(containers=[]), ["spec.containers: Required value"]),
    (_pod(containers=[{"name": "", "image": ""}]), ["spec.containers[0].name: Required value",
                                                    "spec.containers[0].image: Required value"]),
    (_pod(containers=[{"name": "Web_1", "image": "i"}]), [
        'spec.containers[0].name: Invalid value: "Web_1": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    (_pod(containers=[{"name": "a", "image": "i"}, {"name": "a", "image": "i"}]), [
        'spec.containers[1].name: Duplicate value: "a"']),
    (_ctr(ports=[{"containerPort": 70000, "protocol": "HTTP"}]), [
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']),
    (_ctr(ports=[{"name": "web", "containerPort": 80}, {"name": "web", "containerPort": 81}]), [
        'spec.containers[0].ports[1].name: Duplicate value: "web"']),
    (_ctr(ports=[{}]), ["spec.containers[0].ports[0].containerPort: Required value"]),
    (_ctr(env=[{"name": "A=B"}, {"name": ""}]), [
        'spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only '
        "of printable ASCII characters other than '='",
        "spec.containers[0].env[1].name: Required value",
        'spec.containers[0].env[1].name: Invalid value: "": environment variable name must be non-empty']),
    (_ctr(env=[{"name": "A", "value": "x", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]), [
        'spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty']),
    (_ctr(env=[{"name": "A", "valueFrom": {}}]), [
        'spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, '
        "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"]),
    (_ctr(imagePullPolicy="Sometimes"), [
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", '
        '"IfNotPresent", "Never"']),
    (_ctr(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}), [
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1']),
    (_ctr(resources={"requests": {"memory": "-1Gi"}}), [
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0']),
    (_ctr(volumeMounts=[{"name": "data", "mountPath": "/d"}]), [
        'spec.containers[0].volumeMounts[0].name: Not found: "data"']),
    (_pod(volumes=[{"name": "v"}]), ["spec.volumes[0]: Required value: must specify a volume type"]),
    (_pod(volumes=[{"name": "v", "emptyDir": {}, "configMap": {"name": "c"}}]), [
        "spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type"]),
    (_pod(volumes=[{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]), [
        'spec.volumes[1].name: Duplicate value: "v"']),
    (_pod(restartPolicy="Sometimes"), [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']),
    (_pod(dnsPolicy="Bogus"), [
        'spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", '
        '"Default", "None"']),
    (_pod(activeDeadlineSeconds=0), [
        "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"]),
    (_pod(initContainers=[{"name": "app", "image": "i"}]), ['spec.initContainers[0].name: Duplicate value: "app"']),
    (_pod(ephemeralContainers=[{"name": "dbg", "image": "i"}]), [
        "spec.ephemeralContainers: Forbidden: cannot be set on create"]),
    (_ctr(lifecycle={"preStop": {"sleep": {"seconds": 1}}, "postStart": {"exec": {"command": ["true"]}}}), []),
    (_ctr(lifecycle={"preStop": {}}), ["spec.containers[0].lifecycle.preStop: Required value: must specify a "
                                       "handler type"]),
    (_ctr(lifecycle={"postStart": {"exec": {"command": ["true"]}, "sleep": {"seconds": 1}}}), [
        "spec.containers[0].lifecycle.postStart.sleep: Forbidden: may not specify more than 1 handler type"]),
    (_ctr(lifecycle={"preStop": {"httpGet": {"port": 0}}}), [
        "spec.containers[0].lifecycle.preStop.httpGet.port: Invalid value: 0: must be between 1 and 65535, "
        "inclusive"]),
    (_pod(initContainers=[{"name": "init", "image": "i", "lifecycle": {"preStop": {"sleep": {"seconds": 1}}}}]), [
        "spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without "
        "restartPolicy=Always"]),
    (_pod(hostUsers=False), []),
    (_pod(hostUsers=False, containers=[{"name": "a", "image": "i", "securityContext": {"procMount": "Unmasked"}}]),
     []),
    (_ctr(securityContext={"procMount": "Unmasked"}), [
        'spec.containers[0].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use '
        '`Unmasked`']),
    (_ctr(securityContext={"procMount": "Raw"}), [
        'spec.containers[0].securityContext.procMount: Unsupported value: "Raw": supported values: "Default", '
        '"Unmasked"']),
    (_pod(hostUsers=True, hostNetwork=True, hostPID=True), []),
    (_pod(hostUsers=False, hostNetwork=True, hostPID=True, hostIPC=True), [
        "spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false",
        "spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false",
        "spec.HostIPC: Forbidden: when `pod.Spec.HostUsers` is false"]),
])
def test_pods(obj, expected):
    assert errors("Pod", "", obj) == expected


def test_pod_updates_only_change_images():
    old = {"metadata": {**META, "resourceVersion": "1"}, **_pod()}
    image = copy.deepcopy(old)
    image["spec"]["containers"][0]["image"] = "nginx:2"
    assert errors("Pod", "", image, old) == []
    renamed = copy.deepcopy(old)
    renamed["spec"]["restartPolicy"] = "Never"
    [err] = errors("Pod", "", renamed, old)
    assert err.startswith("spec: Forbidden: pod updates may not change fields other than "
                          "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                          "`spec.tolerations` (only additions to existing tolerations),"
                          "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
                          "negative)\n")


def _deploy(**spec) -> dict:
    return {"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": copy.deepcopy(TEMPLATE),
                     **spec}}


@pytest.mark.parametrize(("obj", "expected"), [
    (_deploy(), []),
    (_deploy(replicas=-1), ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    (_deploy(selector={"matchLabels": {"app": "db"}}), [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match '
        "template `labels`"]),
    (_deploy(selector=None), ["spec.selector: Required value",
                              'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                              "`selector` does not match template `labels`"]),
    (_deploy(selector={}), [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"]),
    (_deploy(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}), [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn'"]),
    (_deploy(strategy={"type": "Recreate", "rollingUpdate": {}}), [
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]),
    (_deploy(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}), [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: "
        "may not be 0 when `maxSurge` is 0"]),
    (_deploy(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%", "maxSurge": 1}}), [
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
        'StrVal:"150%"}: must not be greater than 100%']),
    (_deploy(progressDeadlineSeconds=5, minReadySeconds=10), [
        "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"]),
])
def test_deployments(obj, expected):
    assert errors("Deployment", "apps", obj) == expected


def test_controllers_need_restart_policy_always():
    obj = _deploy()
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert errors("ReplicaSet", "apps", obj) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']
    obj["spec"]["template"]["spec"]["containers"] = []
    assert "spec.template.spec.containers: Required value" in errors("DaemonSet", "apps", obj)


def test_stateful_sets():
    obj = _deploy(serviceName="web")
    assert errors("StatefulSet", "apps", obj) == []
    obj["spec"]["podManagementPolicy"] = "Random"
    assert errors("StatefulSet", "apps", obj) == [
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"]
    old = {"metadata": {**META, "resourceVersion": "1"}, **_deploy(serviceName="web")}
    new = copy.deepcopy(old)
    new["spec"]["serviceName"] = "other"
    assert errors("StatefulSet", "apps", new, old) == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"]


def test_daemon_set_selector_must_match():
    obj = {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": copy.deepcopy(TEMPLATE)}}
    assert errors("DaemonSet", "apps", obj) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match '
        "template `labels`"]


def test_replication_controller_selector_defaults_to_template_labels():
    assert errors("ReplicationController", "", {"spec": {"template": copy.deepcopy(TEMPLATE)}}) == []
    assert errors("ReplicationController", "", {"spec": {"selector": {"app": "x"}, "template": copy.deepcopy(
        TEMPLATE)}}) == ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` '
                         "does not match template `labels`"]


def _job(**spec) -> dict:
    template = copy.deepcopy(TEMPLATE)
    template["spec"]["restartPolicy"] = "Never"
    return {"spec": {"template": template, **spec}}


@pytest.mark.parametrize(("obj", "expected"), [
    (_job(), []),
    (_job(backoffLimit=-1, parallelism=-2), ["spec.parallelism: Invalid value: -2: must be greater than or equal to 0",
                                             "spec.backoffLimit: Invalid value: -1: must be greater than or equal "
                                             "to 0"]),
    (_job(completionMode="Indexed"), ["spec.completions: Required value: when completion mode is Indexed"]),
    (_job(manualSelector=True), ["spec.selector: Required value"]),
    (_job(selector={"matchLabels": {"app": "other"}}), [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match '
        "template `labels`"]),
])
def test_jobs(obj, expected):
    assert errors("Job", "batch", obj) == expected


def test_job_template_restart_policy_defaults_to_always_and_is_rejected():
    obj = _job()
    del obj["spec"]["template"]["spec"]["restartPolicy"]
    assert errors("Job", "batch", obj) == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Sometimes"
    assert errors("Job", "batch", obj) == [  # the pod template's own check, then the Job's
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", '
        '"Never"',
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"']


def _indexed(**spec) -> dict:
    return _job(completionMode="Indexed", completions=4, parallelism=2, **spec)


SUCCESS = {"rules": [{"succeededIndexes": "0-1"}]}
GO_SUCCESS = ("batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{batch.SuccessPolicyRule{"
              "SucceededIndexes:(*string)(0xc000a1b2c0), SucceededCount:(*int32)(nil)}}}")


@pytest.mark.parametrize(("obj", "expected"), [
    (_indexed(backoffLimitPerIndex=1, maxFailedIndexes=2), []),
    (_job(backoffLimitPerIndex=1, maxFailedIndexes=1), [
        "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode"]),
    (_indexed(maxFailedIndexes=1), ["spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"]),
    (_indexed(backoffLimitPerIndex=-1, maxFailedIndexes=5), [
        "spec.backoffLimitPerIndex: Invalid value: -1: must be greater than or equal to 0",
        "spec.maxFailedIndexes: Invalid value: 5: must be less than or equal to completions"]),
    (_job(completionMode="Indexed", completions=200_000, parallelism=20_000, backoffLimitPerIndex=0), [
        "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
        "spec.parallelism: Invalid value: 20000: must be less than or equal to 10000 when completions are above "
        "100000 and used with backoff limit per index"]),
    (_indexed(successPolicy=SUCCESS), []),
    (_job(successPolicy=SUCCESS), [f"spec.successPolicy: Invalid value: {GO_SUCCESS}: requires indexed completion "
                                   "mode"]),
    (_indexed(successPolicy={"rules": []}), [
        "spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is "
        "specified"]),
    (_indexed(successPolicy={"rules": [{}]}), [
        "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be "
        "specified"]),
    (_indexed(successPolicy={"rules": [{"succeededIndexes": "1-3,2"}, {"succeededIndexes": "4"},
                                       {"succeededIndexes": "a"}, {"succeededIndexes": "1-2-3"}]}), [
        'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1-3,2": error parsing succeededIndexes: '
        "non-increasing order, previous: 3, current: 2",
        'spec.successPolicy.rules[1].succeededIndexes: Invalid value: "4": error parsing succeededIndexes: '
        'too large index: "4"',
        'spec.successPolicy.rules[2].succeededIndexes: Invalid value: "a": error parsing succeededIndexes: '
        'cannot convert string to integer for index: "a"',
        'spec.successPolicy.rules[3].succeededIndexes: Invalid value: "1-2-3": error parsing succeededIndexes: '
        "the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts "
        "separated by '-'"]),
    (_indexed(successPolicy={"rules": [{"succeededCount": 5}, {"succeededIndexes": "0,2", "succeededCount": 3}]}), [
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or equal to 4 (the number "
        "of specified completions)",
        "spec.successPolicy.rules[1].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number "
        "of indexes in the specified succeededIndexes field)"]),
])
def test_indexed_job_limits_and_success_policy(obj, expected):
    assert errors("Job", "batch", obj) == expected


def test_indexed_job_name_must_leave_room_for_the_index_in_the_hostname():
    obj = {"metadata": {**META, "name": "a" * 62}, **_indexed()}
    assert errors("Job", "batch", obj) == [
        f'metadata.name: Invalid value: "{"a" * 62}": will not able to create pod with invalid DNS label: '
        f'{"a" * 62}-3']


FAIL_INDEX = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}


@pytest.mark.parametrize(("spec", "expected"), [
    ({"backoffLimitPerIndex": 1, "podFailurePolicy": FAIL_INDEX}, []),
    ({"podFailurePolicy": FAIL_INDEX}, [
        'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be '
        "set"]),
    ({"podFailurePolicy": {"rules": [{"action": "Retry", "onExitCodes": {"operator": "In", "values": [0, 2, 2, 1],
                                                                          "containerName": "other"}}]}}, [
        'spec.podFailurePolicy.rules[0].action: Unsupported value: "Retry": supported values: "Count", "FailIndex", '
        '"FailJob", "Ignore"',
        'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "other": must be one of the '
        "container or initContainer names in the pod template",
        "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
        "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 2",
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 2, 2, 1}: must be ordered"]),
    ({"podFailurePolicy": {"rules": [{"action": "Ignore"}, {
        "action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]},
        "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}]}]}}, [
        "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is "
        "required",
        'spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: '
        '"False", "True", "Unknown"',
        "spec.podFailurePolicy.rules[1]: Invalid value: specifying both OnExitCodes and OnPodConditions is not "
        "supported"]),
    ({"podFailurePolicy": {"rules": [{"onExitCodes": {"values": []}}]}}, [
        'spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" '
        '"Ignore"]',
        'spec.podFailurePolicy.rules[0].onExitCodes.operator: Required value: valid values: ["In" "NotIn"]',
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{}: at least one value is "
        "required"]),
    ({"podFailurePolicy": FAIL_INDEX, "backoffLimitPerIndex": 0, "podReplacementPolicy": "TerminatingOrFailed"}, [
        'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"']),
])
def test_pod_failure_policy_rules(spec, expected):
    assert errors("Job", "batch", _indexed(**spec)) == expected


def test_pod_failure_policy_needs_restart_policy_never():
    obj = _indexed(podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [
        {"type": "DisruptionTarget", "status": "True"}]}]})
    obj["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert errors("Job", "batch", obj) == [
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
        "podFailurePolicy is specified"]


def test_per_index_and_success_policies_are_immutable_but_max_failed_indexes_is_not():
    old = {"metadata": {**META, "resourceVersion": "1"}, **_indexed(backoffLimitPerIndex=1, maxFailedIndexes=1)}
    new = copy.deepcopy(old)
    new["spec"]["maxFailedIndexes"] = 3
    assert errors("Job", "batch", new, old) == []
    new["spec"].update(backoffLimitPerIndex=2, successPolicy=SUCCESS, podFailurePolicy=FAIL_INDEX)
    assert errors("Job", "batch", new, old) == [
        "spec.podFailurePolicy: Invalid value: batch.PodFailurePolicy{Rules:[]batch.PodFailurePolicyRule{"
        'batch.PodFailurePolicyRule{Action:"FailIndex", OnExitCodes:(*batch.PodFailurePolicyOnExitCodesRequirement)'
        "(0xc000a1b2c0), OnPodConditions:[]batch.PodFailurePolicyOnPodConditionsPattern(nil)}}}: field is immutable",
        "spec.backoffLimitPerIndex: Invalid value: 2: field is immutable",
        f"spec.successPolicy: Invalid value: {GO_SUCCESS}: field is immutable"]
    del new["spec"]["backoffLimitPerIndex"], new["spec"]["maxFailedIndexes"], new["spec"]["podFailurePolicy"]
    assert "spec.backoffLimitPerIndex: Invalid value: null: field is immutable" in errors("Job", "batch", new, old)


@pytest.mark.parametrize(("spec", "expected"), [
    ({"schedule": "*/5 * * * *"}, []),
    ({"schedule": "@hourly"}, []),
    ({"schedule": ""}, ["spec.schedule: Required value"]),
    ({"schedule": "* * *"}, ['spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]']),
    ({"schedule": "TZ=UTC * * * * *"}, [
        'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field '
        "instead"]),
    ({"schedule": "* * * * *", "timeZone": "Mars/Olympus"}, [
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']),
    ({"schedule": "* * * * *", "concurrencyPolicy": "Sometimes"}, [
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"']),
])
def test_cron_jobs(spec, expected):
    job_template = {"spec": _job()["spec"]}
    assert errors("CronJob", "batch", {"spec": {"jobTemplate": job_template, **spec}}) == expected


def _svc(**spec) -> dict:
    return {"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"type": "ClusterIP", "ports": [{"port": 80, "protocol": "TCP"}], **spec}}


@pytest.mark.parametrize(("obj", "expected"), [
    (_svc(), []),
    (_svc(ports=[]), ["spec.ports: Required value"]),
    (_svc(ports=[], clusterIP="None", clusterIPs=["None"]), []),
    (_svc(ports=[{"port": 0, "protocol": "TCP"}]), [
        "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"]),
    (_svc(ports=[{"port": 80, "protocol": "HTTP"}]), [
        'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']),
    (_svc(ports=[{"port": 80, "protocol": "TCP"}, {"port": 81, "protocol": "TCP"}]), [
        "spec.ports[0].name: Required value", "spec.ports[1].name: Required value"]),
    (_svc(ports=[{"name": "a", "port": 80, "protocol": "TCP"}, {"name": "b", "port": 80, "protocol": "TCP"}]), [
        'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), '
        'Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}']),
    (_svc(ports=[{"port": 80, "protocol": "TCP", "nodePort": 30001}]), [
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]),
    (_svc(type="NodePort", ports=[{"port": 80, "protocol": "TCP", "nodePort": 30001}]), []),
    (_svc(type="Balanced"), [
        'spec.type: Unsupported value: "Balanced": supported values: "ClusterIP", "ExternalName", "LoadBalancer", '
        '"NodePort"']),
    (_svc(type="ExternalName", ports=[]), ["spec.externalName: Required value"]),
    (_svc(type="ExternalName", externalName="db.example.com."), []),
    (_svc(selector={"app": "we b"}), [
        'spec.selector: Invalid value: "we b": a valid label must be an empty string or consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    (_svc(clusterIP="10.0.0.5", clusterIPs=["10.0.0.6"]), [
        'spec.clusterIPs: Invalid value: []string{"10.0.0.6"}: first value must match `clusterIP`']),
    (_svc(clusterIP="10.0.0.999", clusterIPs=["10.0.0.999"]), [
        'spec.clusterIPs[0]: Invalid value: "10.0.0.999": must be a valid IP address, (e.g. 10.9.8.7 or '
        "2001:db8::ffff)"]),
    (_svc(externalIPs=["127.0.0.1"]), [
        'spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)']),
    (_svc(sessionAffinity="Sticky"), [
        'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"']),
    (_svc(type="LoadBalancer", clusterIP="None", clusterIPs=["None"]), [
        "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for LoadBalancer services"]),
])
def test_services(obj, expected):
    assert errors("Service", "", obj) == expected


def test_service_names_are_dns1035_labels():
    assert errors("Service", "", {**_svc(), "metadata": {"name": "1web", "namespace": "ns"}})[0].startswith(
        'metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters')


def test_cluster_ip_cannot_change():
    old = _svc(clusterIP="10.0.0.5", clusterIPs=["10.0.0.5"])
    old["metadata"]["resourceVersion"] = "3"
    new = copy.deepcopy(old)
    new["spec"].update(clusterIP="10.0.0.6", clusterIPs=["10.0.0.6"])
    assert errors("Service", "", new, old) == [
        'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.6"}: may not change once set']
    unset = copy.deepcopy(old)
    unset["spec"].update(clusterIP="", clusterIPs=[])
    assert errors("Service", "", unset, old) == [
        "spec.clusterIPs[0]: Invalid value: []string{}: primary clusterIP can not be unset"]


RBAC = "rbac.authorization.k8s.io"


@pytest.mark.parametrize(("kind", "obj", "expected"), [
    ("Role", {"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}, []),
    ("Role", {"rules": [{}]}, ["rules[0].verbs: Required value: verbs must contain at least one value",
                               "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                               "rules[0].resources: Required value: resource rules must supply at least one "
                               "resource"]),
    ("Role", {"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}, [
        'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to '
        "non-resource URLs"]),
    ("ClusterRole", {"metadata": {"name": "x"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"],
                                                           "resources": ["pods"]}]}, [
        'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and '
        "non-resource URLs"]),
    ("RoleBinding", {"roleRef": {"apiGroup": RBAC, "kind": "Pod", "name": "r"}, "subjects": [
        {"kind": "Robot", "name": "r2"}, {"kind": "ServiceAccount", "name": ""}]}, [
        'roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole"',
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        "subjects[1].name: Required value"]),
    ("ClusterRoleBinding", {"metadata": {"name": "x"}, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"},
                            "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}, [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        "subjects[0].namespace: Required value"]),
])
def test_rbac(kind, obj, expected):
    assert errors(kind, RBAC, obj) == expected


def test_role_ref_is_immutable():
    old = {"metadata": {**META, "resourceVersion": "1"}, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "a"}}
    new = {**old, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "b"}}
    assert errors("RoleBinding", RBAC, new, old) == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: cannot '
        "change roleRef"]


def test_namespaces_and_service_accounts():
    assert errors("Namespace", "", {"metadata": {"name": "team-a"}}) == []
    assert errors("Namespace", "", {"metadata": {"name": "team-a"}, "spec": {"finalizers": ["custom"]}}) == [
        'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name nor is it fully '
        "qualified"]
    assert errors("ServiceAccount", "", {}) == []


def test_leases():
    assert errors("Lease", "coordination.k8s.io", {"spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}}) == [
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"]


@pytest.mark.parametrize(("obj", "expected"), [
    ({"addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"]}], "ports": [{"name": "http", "port": 80,
                                                                                     "protocol": "TCP"}]}, []),
    ({"endpoints": []}, ["addressType: Required value"]),
    ({"addressType": "IPv5"}, ['addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"']),
    ({"addressType": "IPv4", "endpoints": [{"addresses": []}]}, [
        "endpoints[0].addresses: Required value: must contain at least 1 address"]),
    ({"addressType": "IPv4", "endpoints": [{"addresses": ["fe80::1"]}]}, [
        'endpoints[0].addresses[0]: Invalid value: "fe80::1": must be a valid IPv4 address',
        'endpoints[0].addresses[0]: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, '
        "fe80::/10)"]),
    ({"addressType": "IPv4", "ports": [{"name": "a"}, {"name": "a"}]}, ['ports[1].name: Duplicate value: "a"']),
])
def test_endpoint_slices(obj, expected):
    assert errors("EndpointSlice", "discovery.k8s.io", obj) == expected


def test_endpoints():
    obj = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"},
                                                                      {"port": 81, "protocol": "TCP"}]}, {}]}
    assert errors("Endpoints", "", obj) == [
        "subsets[0].ports[0].name: Required value", "subsets[0].ports[1].name: Required value",
        "subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`"]


def test_events_core_and_events_api():
    core = {"metadata": {"name": "Weird Name!", "namespace": "ns"}, "involvedObject": {"kind": "Pod", "name": "p",
                                                                                      "namespace": "other"}}
    assert errors("Event", "", core) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace']
    new = {"metadata": {"name": "e1", "namespace": "ns"}, "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"},
           "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl",
           "reportingInstance": "ctl-1", "action": "Scale", "reason": "Scaled", "type": "Normal"}
    assert errors("Event", "events.k8s.io", new) == []
    bad = {**new, "type": "Odd", "deprecatedCount": 3, "reportingController": ""}
    got = errors("Event", "events.k8s.io", bad)
    assert got[0] == "reportingController: Required value"
    assert got[1] == 'reportingController: Invalid value: "": name part must be non-empty'
    assert got[-2:] == ['type: Invalid value: "": has invalid value: Odd',
                        'deprecatedCount: Invalid value: "": needs to be unset']


def test_priority_classes():
    assert errors("PriorityClass", "scheduling.k8s.io", {"metadata": {"name": "high"}, "value": 2_000_000_000}) == [
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
    assert errors("PriorityClass", "scheduling.k8s.io", {"metadata": {"name": "system-x"}, "value": 1})[0] == (
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-x is not a known system priority class")


def test_claims():
    claim = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    assert errors("PersistentVolumeClaim", "", claim) == []
    assert errors("PersistentVolumeClaim", "", {"spec": {}}) == [
        "spec.accessModes: Required value: at least 1 access mode is required",
        "spec.resources[storage]: Required value"]
    old = {"metadata": {**META, "resourceVersion": "1"}, **claim}
    shrink = copy.deepcopy(old)
    shrink["spec"]["resources"]["requests"]["storage"] = "512Mi"
    assert errors("PersistentVolumeClaim", "", shrink, old) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"]


def test_unknown_kinds_get_metadata_checks_only():
    assert errors("Widget", "example.com", {"spec": {"anything": True}}) == []
    assert errors("Widget", "example.com", {"metadata": {"name": "UPPER", "namespace": "ns"}})[0].startswith(
        'metadata.name: Invalid value: "UPPER"')


def _ingress(path: dict | None = None, **rule) -> dict:
    item = {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}
    return {"spec": {"rules": [{"host": "web.example.com", "http": {"paths": [{**item, **(path or {})}]}, **rule}]}}


@pytest.mark.parametrize(("obj", "expected"), [
    (_ingress(), []),
    (_ingress(host="*.example.com"), []),
    ({"spec": {}}, ["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be "
                    "specified"]),
    (_ingress({"pathType": None}), ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be "
                                    "specified"]),
    (_ingress({"path": "api"}), ['spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path']),
    (_ingress({"path": "/a//b"}), ["spec.rules[0].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//'"]),
    (_ingress(host="10.0.0.1"), ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP '
                                 "address"]),
    (_ingress({"backend": {"service": {"name": "web", "port": {}}}}), [
        "spec.rules[0].http.paths[0].backend: Required value: port name or number is required"]),
    (_ingress({"backend": {}}), [
        'spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required']),
])
def test_ingresses(obj, expected):
    assert errors("Ingress", "networking.k8s.io", obj) == expected


def test_network_policies():
    obj = {"spec": {"podSelector": {}, "policyTypes": ["Ingress", "Sideways"], "ingress": [
        {"ports": [{"protocol": "TCP", "port": 80, "endPort": 70}], "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}}
    assert errors("NetworkPolicy", "networking.k8s.io", obj) == [
        "spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to `port`",
        "spec.ingress[0].from[0]: Required value: must specify a peer",
        'spec.ingress[0].from[1].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. '
        "10.9.8.0/24 or 2001:db8::/64)",
        'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Egress", "Ingress"']


def test_autoscalers_and_budgets():
    hpa = {"spec": {"scaleTargetRef": {"kind": "Deployment"}, "minReplicas": 3, "maxReplicas": 2}}
    assert errors("HorizontalPodAutoscaler", "autoscaling", hpa) == [
        "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
        "spec.scaleTargetRef.name: Required value"]
    pdb = {"spec": {"minAvailable": "120%", "selector": {"matchLabels": {"app": "web"}}}}
    assert errors("PodDisruptionBudget", "policy", pdb) == [
        'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater '
        "than 100%"]
    both = {"spec": {"minAvailable": 1, "maxUnavailable": 1}}
    assert errors("PodDisruptionBudget", "policy", both) == [
        "spec: Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set"]


@pytest.mark.parametrize(("kind", "group", "obj", "expected"), [
    ("StorageClass", "storage.k8s.io", {"provisioner": "x", "volumeBindingMode": "Immediate"}, []),
    ("StorageClass", "storage.k8s.io", {"volumeBindingMode": "Immediate"}, ["provisioner: Required value"]),
    ("StorageClass", "storage.k8s.io", {"provisioner": "x", "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"},
     ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
      'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"']),
    ("RuntimeClass", "node.k8s.io", {"handler": "runc"}, []),
    ("RuntimeClass", "node.k8s.io", {"handler": "run.c"}, ['handler: Invalid value: "run.c": must not contain dots']),
    ("RuntimeClass", "node.k8s.io", {"handler": "runc", "scheduling": {"tolerations": [
        {"key": "k", "operator": "Always"}]}},
     ['scheduling.tolerations[0].operator: Unsupported value: "Always": supported values: "Equal", "Exists"']),
    ("Node", "", {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}, []),
    ("Node", "", {"spec": {"taints": [{"key": "k", "effect": "Sometimes"}, {"key": "k", "value": "a b"}]}},
     ['spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", '
      '"NoExecute"',
      "spec.taints[1].value: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
      "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      "spec.taints[1].effect: Required value"]),
    ("ResourceQuota", "", {"spec": {"hard": {"cpu": "10", "pods": "5"}}}, []),
    ("ResourceQuota", "", {"spec": {"hard": {"cpu": "-1", "pods": "1.5"}}, "status": {"used": {"memory": "-1Mi"}}},
     ['spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.hard[pods]: Invalid value: "1500m": must be an integer',
      'status.used[memory]: Invalid value: "-1Mi": must be greater than or equal to 0']),
])
def test_classes_and_node_taints(kind, group, obj, expected):
    """These kinds had no rules: any reclaimPolicy, handler, taint effect or negative quota was stored."""
    meta = {"name": "n", "namespace": "ns"} if kind == "ResourceQuota" else {"name": "n"}
    assert errors(kind, group, {"metadata": meta, **obj}) == expected


PV_SPEC = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/pv"}}


@pytest.mark.parametrize(("spec", "expected"), [
    (PV_SPEC, []),
    ({**PV_SPEC, "persistentVolumeReclaimPolicy": "Keep"}, [
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", '
        '"Retain"']),
    ({**PV_SPEC, "nfs": {"server": "nfs.example.com", "path": "/exports"}}, [
        "spec.nfs: Forbidden: may not specify more than 1 volume type"]),
    ({**PV_SPEC, "hostPath": None}, ["spec: Required value: must specify a volume type"]),
    ({**PV_SPEC, "hostPath": {"path": ""}}, ["spec.hostPath.path: Required value"]),
    ({**PV_SPEC, "capacity": None}, [
        "spec.capacity: Required value",
        'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"']),
    ({**PV_SPEC, "capacity": {"storage": "0"}}, ["spec.capacity[storage]: Invalid value: \"0\": must be greater than "
                                                 "zero"]),
    ({**PV_SPEC, "accessModes": None}, ["spec.accessModes: Required value"]),
    ({**PV_SPEC, "accessModes": ["ReadWriteAll"]}, [
        'spec.accessModes: Unsupported value: "ReadWriteAll": supported values: "ReadOnlyMany", "ReadWriteMany", '
        '"ReadWriteOnce", "ReadWriteOncePod"']),
    ({**PV_SPEC, "hostPath": None, "local": {"path": "/mnt/disk"}}, [
        "spec.nodeAffinity: Required value: Local volume requires node affinity"]),
    ({**PV_SPEC, "hostPath": {"path": "/"}, "persistentVolumeReclaimPolicy": "Recycle"}, [
        "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"]),
])
def test_persistent_volumes(spec, expected):
    """PersistentVolumes had no rules: any reclaim policy, no source or two, no capacity were stored."""
    assert errors("PersistentVolume", "", {"metadata": {"name": "pv"}, "spec": spec}) == expected


def _quantity(value: int, scale: int, text: str) -> str:
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{"
            f'Dec:(*inf.Dec)(nil)}}, s:"{text}", Format:"DecimalSI"}}')


@pytest.mark.parametrize(("limits", "expected"), [
    ([{"type": "Container", "min": {"cpu": "100m"}, "default": {"cpu": "500m"}, "max": {"cpu": "1"}}], []),
    ([{"type": "Node"}], ['spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully '
                          "qualified"]),
    ([{"type": "Container"}, {"type": "Container"}], ['spec.limits[1].type: Duplicate value: "Container"']),
    ([{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}], [
        f"spec.limits[0].min[cpu]: Invalid value: {_quantity(2, 0, '2')}: min value 2 is greater than max value 1"]),
    ([{"type": "Container", "default": {"cpu": "2"}, "max": {"cpu": "1"}}], [
        f"spec.limits[0].default[cpu]: Invalid value: {_quantity(1, 0, '1')}: default value 2 is greater than max "
        "value 1"]),
    ([{"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "600m"}}], [
        f"spec.limits[0].defaultRequest[cpu]: Invalid value: {_quantity(600, -3, '600m')}: default request value "
        "600m is greater than default limit value 500m"]),
    ([{"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}}], [
        f"spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: {_quantity(500, -3, '500m')}: ratio 500m is less "
        "than 1"]),
    ([{"type": "Container", "min": {"cpu": "1"}, "max": {"cpu": "2"}, "maxLimitRequestRatio": {"cpu": "3"}}], [
        f"spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: {_quantity(3, 0, '3')}: ratio 3 is greater than "
        "max/min = 2.000000"]),
    ([{"type": "Pod", "default": {"cpu": "1"}}], [
        "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]),
    ([{"type": "PersistentVolumeClaim", "default": {"storage": "1Gi"}}], [
        "spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither "
        "was provided"]),
])
def test_limit_ranges(limits, expected):
    """LimitRanges had no rules: any type, a min above the max or a ratio below 1 was stored."""
    assert errors("LimitRange", "", {"spec": {"limits": limits}}) == expected


HPA_SPEC = {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}


@pytest.mark.parametrize(("behavior", "expected"), [
    ({"scaleUp": {"policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]}}, []),
    ({"scaleUp": {"selectPolicy": "Most", "stabilizationWindowSeconds": 3601, "policies": [
        {"type": "Nodes", "value": 0, "periodSeconds": 1801}]}}, [
        "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
        'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", "Min"',
        'spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: "Percent", "Pods"',
        "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800"]),
    ({"scaleDown": {"stabilizationWindowSeconds": -1, "policies": []}}, [
        "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
        "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"]),
    ({"scaleDown": {"policies": [{"type": "Percent", "value": 10}]}}, [
        "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 0: must be greater than zero"]),
])
def test_autoscaler_behavior(behavior, expected):
    """Scaling rules were not checked: any policy type, a zero value or a day-long period was stored."""
    assert errors("HorizontalPodAutoscaler", "autoscaling", {"spec": {**HPA_SPEC, "behavior": behavior}}) == expected


CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


@pytest.mark.parametrize(("spec", "expected"), [
    ({"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]}, []),
    ({"podCIDRs": ["10.244.1.0/24", "fd00:10:244:1::/64"]}, []),
    ({"podCIDRs": ["10.244.1.0"]}, [f'spec.podCIDRs[0]: Invalid value: "10.244.1.0": {CIDR_MSG}']),
    ({"podCIDRs": ["10.244.1.0/24", "10.244.2.0/24"]}, [
        'spec.podCIDRs: Invalid value: []string{"10.244.1.0/24", "10.244.2.0/24"}: may specify no more than one CIDR '
        "for each IP family"]),
    ({"podCIDRs": ["10.244.1.0/24", "nope"]}, [
        f'spec.podCIDRs[1]: Invalid value: "nope": {CIDR_MSG}',
        "spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR "
        "address: nope",
        'spec.podCIDRs: Invalid value: []string{"10.244.1.0/24", "nope"}: may specify no more than one CIDR for each '
        "IP family"]),
])
def test_node_pod_cidrs(spec, expected):
    """A Node's pod CIDRs were not checked: any text was stored and reached kube-proxy's node lookup."""
    assert errors("Node", "", {"metadata": {"name": "n"}, "spec": spec}) == expected


CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}


@pytest.mark.parametrize(("metrics", "expected"), [
    ([CPU], []),
    ([{"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}],
     []),
    ([{"type": "Resources", "resource": CPU["resource"]}], [
        'spec.metrics[0].type: Unsupported value: "Resources": supported values: "ContainerResource", "External", '
        '"Object", "Pods", "Resource"'] * 2),
    ([{"type": "Pods", "resource": CPU["resource"]}], [
        "spec.metrics[0].pods: Required value: must populate information for the given metric source"]),
    ([{**CPU, "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "1"}}}], [
        "spec.metrics[0].pods: Forbidden: must populate the given metric source only"]),
    ([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Most", "averageUtilization": 0}}}], [
        'spec.metrics[0].resource.target.type: Invalid value: "Most": must be either Utilization, Value, or '
        "AverageValue",
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"]),
    ([{"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "0"}}}], [
        "spec.metrics[0].external.target.value: Invalid value: resource.Quantity{i:resource.int64Amount{value:0, "
        'scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"0", Format:"DecimalSI"}: must be positive']),
    ([{"type": "Object", "object": {"describedObject": {"kind": "Service"}, "metric": {},
                                    "target": {"type": "Value"}}}], [
        "spec.metrics[0].object.describedObject.name: Required value",
        "spec.metrics[0].object.metric.name: Required value: must specify a metric name",
        "spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue"]),
])
def test_autoscaler_metrics(metrics, expected):
    """Metrics were not checked: an unknown source type, a missing source or a zero target was stored."""
    assert errors("HorizontalPodAutoscaler", "autoscaling", {"spec": {**HPA_SPEC, "metrics": metrics}}) == expected


def test_node_pod_cidrs_and_provider_id_are_set_once():
    old = {"metadata": {"name": "n", "resourceVersion": "1"}, "spec": {"podCIDRs": ["10.244.1.0/24"]}}
    assert errors("Node", "", {**old, "spec": {"podCIDRs": ["10.244.1.0/24"], "providerID": "mini://n"}}, old) == []
    moved = {**old, "spec": {"podCIDRs": ["10.244.2.0/24"]}}
    assert errors("Node", "", moved, old) == [
        'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid']
    named = {**old, "spec": {"podCIDRs": ["10.244.1.0/24"], "providerID": "mini://n"}}
    assert errors("Node", "", {**old, "spec": {"podCIDRs": ["10.244.1.0/24"], "providerID": "mini://m"}}, named) == [
        'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid']


def test_persistent_volume_source_and_mode_are_fixed():
    old = {"metadata": {"name": "pv", "resourceVersion": "1"}, "spec": {**PV_SPEC, "volumeMode": "Filesystem"}}
    relabeled = {**old, "metadata": {**old["metadata"], "labels": {"a": "b"}},
                 "spec": {**old["spec"], "persistentVolumeReclaimPolicy": "Delete"}}
    assert errors("PersistentVolume", "", relabeled, old) == []
    unset = {**old, "spec": {k: v for k, v in old["spec"].items() if k != "volumeMode"}}
    assert errors("PersistentVolume", "", old, unset) == []
    moved = {**old, "spec": {**old["spec"], "hostPath": {"path": "/tmp/other"}, "volumeMode": "Block"}}
    assert errors("PersistentVolume", "", moved, old) == [
        "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation",
        'volumeMode: Invalid value: "Block": field is immutable']


@pytest.mark.parametrize(("spec", "expected"), [
    ({"controller": "example.com/ingress-controller"}, []),
    ({"controller": "example.com/ingress", "parameters": {"kind": "Params", "name": "p", "scope": "Cluster"}}, []),
    ({}, ["spec.controller: Required value"]),
    ({"controller": "nginx"}, [
        'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")']),
    ({"controller": "Example.com/a b"}, [
        'spec.controller: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "spec.controller: Invalid value: \"a b\": Invalid path (regex used for validation is "
        "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"]),
    ({"controller": "example.com/i", "parameters": {"name": "p", "scope": "Namespace"}}, [
        "spec.parameters.kind: Required value: kind is required",
        "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]),
    ({"controller": "example.com/i", "parameters": {"kind": "K", "name": "p", "scope": "Cluster", "namespace": "x"}},
     ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]),
])
def test_ingress_classes(spec, expected):
    """IngressClasses had no rules: any controller name or parameters scope was stored."""
    assert errors("IngressClass", "networking.k8s.io", {"metadata": {"name": "c"}, "spec": spec}) == expected


def test_ingress_class_controller_is_fixed():
    old = {"metadata": {"name": "c", "resourceVersion": "1"}, "spec": {"controller": "example.com/a"}}
    assert errors("IngressClass", "networking.k8s.io", {**old, "spec": {"controller": "example.com/b"}}, old) == [
        'spec.controller: Invalid value: "example.com/b": field is immutable']


VA_SPEC = {"attacher": "csi.example.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}}


@pytest.mark.parametrize(("spec", "expected"), [
    (VA_SPEC, []),
    ({**VA_SPEC, "source": {}}, [
        "spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"]),
    ({**VA_SPEC, "source": {"persistentVolumeName": "pv-1", "inlineVolumeSpec": {}}}, [
        "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName"]),
    ({**VA_SPEC, "attacher": "CSI Driver"}, [
        'spec.attacher: Invalid value: "CSI Driver": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ]),
    ({**VA_SPEC, "nodeName": "Node_1"}, [
        'spec.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ]),
])
def test_volume_attachments(spec, expected):
    """VolumeAttachments had no rules: no source, two sources or any attacher name was stored."""
    assert errors("VolumeAttachment", "storage.k8s.io", {"metadata": {"name": "va"}, "spec": spec}) == expected


def test_volume_attachment_spec_is_fixed():
    old = {"metadata": {"name": "va", "resourceVersion": "1"}, "spec": VA_SPEC}
    assert errors("VolumeAttachment", "storage.k8s.io", {**old, "spec": {**VA_SPEC, "nodeName": "node-2"}}, old) == [
        "spec: Invalid value: storage.VolumeAttachmentSpec{...}: field is immutable"]


CSI_SPEC = {"attachRequired": True, "storageCapacity": False, "volumeLifecycleModes": ["Persistent"]}


@pytest.mark.parametrize(("spec", "expected"), [
    (CSI_SPEC, []),
    ({**CSI_SPEC, "fsGroupPolicy": "Sometimes", "volumeLifecycleModes": ["Forever"]}, [
        'spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", "None", '
        '"ReadWriteOnceWithFSType"',
        'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"']),
    ({**CSI_SPEC, "tokenRequests": [{"audience": "a", "expirationSeconds": 60}, {"audience": "a"}]}, [
        "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
        'spec.tokenRequests[1].audience: Duplicate value: "a"']),
])
def test_csi_drivers(spec, expected):
    """CSIDrivers had no rules: any fsGroupPolicy, lifecycle mode or token request was stored."""
    assert errors("CSIDriver", "storage.k8s.io", {"metadata": {"name": "csi.example.com"}, "spec": spec}) == expected


def test_csi_driver_attach_and_modes_are_fixed():
    old = {"metadata": {"name": "csi.example.com", "resourceVersion": "1"}, "spec": CSI_SPEC}
    new = {**old, "spec": {**CSI_SPEC, "attachRequired": False, "volumeLifecycleModes": ["Ephemeral"]}}
    assert errors("CSIDriver", "storage.k8s.io", new, old) == [
        "spec.attachedRequired: Invalid value: false: field is immutable",
        'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: field is immutable']


def test_controller_revisions():
    """ControllerRevisions had no rules: one without data or with a negative revision was stored."""
    assert errors("ControllerRevision", "apps", {"data": {"spec": {}}, "revision": 1}) == []
    assert errors("ControllerRevision", "apps", {"revision": -1}) == [
        "data: Required value: data is mandatory",
        "revision: Invalid value: -1: must be greater than or equal to 0"]
    old = {"metadata": {**META, "resourceVersion": "1"}, "data": {"spec": {}}, "revision": 1}
    assert errors("ControllerRevision", "apps", {**old, "revision": 3}, old) == []
    assert errors("ControllerRevision", "apps", {**old, "data": {"spec": {"x": 1}}}, old) == [
        "data: Invalid value: runtime.RawExtension{...}: field is immutable"]


def test_csi_storage_capacities():
    """CSIStorageCapacities had no rules: a negative capacity or a bad class name was stored."""
    good = {"storageClassName": "fast", "capacity": "10Gi", "nodeTopology": {"matchLabels": {"zone": "a"}}}
    assert errors("CSIStorageCapacity", "storage.k8s.io", good) == []
    assert errors("CSIStorageCapacity", "storage.k8s.io", {**good, "storageClassName": "Fast", "capacity": "-1"}) == [
        'storageClassName: Invalid value: "Fast": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'capacity: Invalid value: "-1": must be greater than or equal to 0']
    old = {"metadata": {**META, "resourceVersion": "1"}, **good}
    assert errors("CSIStorageCapacity", "storage.k8s.io", {**old, "capacity": "5Gi"}, old) == []
    assert errors("CSIStorageCapacity", "storage.k8s.io", {**old, "storageClassName": "slow"}, old) == [
        'storageClassName: Invalid value: "slow": field is immutable']


def test_csi_nodes():
    """CSINodes had no rules: a driver without a node ID, twice listed or with bad topology keys was stored."""
    driver = {"name": "csi.example.com", "nodeID": "node-1", "topologyKeys": ["topology.example.com/zone"]}
    node = {"metadata": {"name": "node-1"}}
    assert errors("CSINode", "storage.k8s.io", {**node, "spec": {"drivers": [driver]}}) == []
    bad = {"name": "csi.example.com", "nodeID": "", "allocatable": {"count": -1}, "topologyKeys": ["a", "a"]}
    assert errors("CSINode", "storage.k8s.io", {**node, "spec": {"drivers": [driver, bad]}}) == [
        "spec.drivers[1].nodeID: Required value",
        "spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
        'spec.drivers[1].name: Duplicate value: "csi.example.com"',
        'spec.drivers[1]: Duplicate value: "a"']
    old = {"metadata": {"name": "node-1", "resourceVersion": "1"}, "spec": {"drivers": [driver]}}
    moved = {**old, "spec": {"drivers": [{**driver, "nodeID": "node-2"}]}}
    assert errors("CSINode", "storage.k8s.io", moved, old) == [
        "spec.drivers: Invalid value: storage.CSINodeDriver{...}: field is immutable"]
