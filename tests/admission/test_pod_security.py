"""Pod Security Admission as upstream's PodSecurity plugin, through real kubectl: a namespace's `enforce` level
refuses Pods with upstream's exact message, `warn` returns the Warning kubectl prints, workloads get warnings
only, label changes warn about existing Pods, bad labels are 422, unlabelled namespaces are privileged."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from mini_kube.machinery.refs import DEPLOYMENTS, PODS

from mini_kube.testing import MiniKube
from tests.helpers import kubectl

RESTRICTED_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
    "spec": {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
             "containers": [{"name": "c", "image": "nginx", "securityContext": {
                 "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]},
}
APE = 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)'


@pytest.fixture(scope="module")
def kube():
    with MiniKube(controllers=False, scheduler=False) as cluster:
        for name, labels in (("restricted", {"enforce": "restricted"}), ("baseline", {"enforce": "baseline"}),
                             ("warned", {"warn": "baseline"}),
                             ("old", {"enforce": "restricted", "enforce-version": "v1.21"}),
                             ("v131", {"enforce": "baseline", "enforce-version": "v1.31"})):
            kubectl(cluster, "create", "namespace", name)
            kubectl(cluster, "label", "namespace", name,
                    *[f"pod-security.kubernetes.io/{k}={v}" for k, v in labels.items()])
        yield cluster


def pod_with(change: dict[str, Any], name: str = "p") -> dict[str, Any]:
    """The restricted-compliant Pod with `change` merged into its spec (container changes under "c")."""
    pod = copy.deepcopy(RESTRICTED_POD)
    pod["metadata"]["name"] = name
    spec = pod["spec"]
    for key, value in change.items():
        if key == "c":
            for ckey, cvalue in value.items():
                if cvalue is None:
                    spec["containers"][0]["securityContext"].pop(ckey, None)
                elif isinstance(cvalue, dict) and ckey in spec["containers"][0]["securityContext"]:
                    spec["containers"][0]["securityContext"][ckey].update(cvalue)
                elif ckey == "ports":
                    spec["containers"][0]["ports"] = cvalue
                else:
                    spec["containers"][0]["securityContext"][ckey] = cvalue
        elif key == "pod":
            spec["securityContext"].update(value)
        else:
            spec[key] = value
    return pod


def create(kube: MiniKube, namespace: str, obj: dict[str, Any]):
    return kubectl(kube, "create", "-n", namespace, "-f", "-", input=json.dumps(obj), check=False)


def refusal(namespace_level: str, detail: str, name: str = "p") -> str:
    return (f'Error from server (Forbidden): error when creating "STDIN": pods "{name}" is forbidden: violates '
            f'PodSecurity "{namespace_level}": {detail}')


VIOLATIONS = [  # (spec change, restricted:latest detail, baseline:latest detail or None when baseline allows it)
    ({"hostNetwork": True}, "host namespaces (hostNetwork=true)", "host namespaces (hostNetwork=true)"),
    ({"hostPID": True, "hostIPC": True}, "host namespaces (hostPID=true, hostIPC=true)",
     "host namespaces (hostPID=true, hostIPC=true)"),
    ({"c": {"privileged": True, "allowPrivilegeEscalation": None}},
     f'privileged (container "c" must not set securityContext.privileged=true), {APE}',
     'privileged (container "c" must not set securityContext.privileged=true)'),
    ({"c": {"capabilities": {"add": ["SYS_ADMIN", "NET_RAW"]}}},
     'unrestricted capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in '
     "securityContext.capabilities.add)",
     'non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in '
     "securityContext.capabilities.add)"),
    ({"volumes": [{"name": "h", "hostPath": {"path": "/"}}]},
     'restricted volume types (volume "h" uses restricted volume type "hostPath")', 'hostPath volumes (volume "h")'),
    ({"volumes": [{"name": "n", "nfs": {"server": "nfs.example.com", "path": "/"}}]},
     'restricted volume types (volume "n" uses restricted volume type "nfs")', None),
    ({"c": {"ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 10}]}},
     'hostPort (container "c" uses hostPorts 10, 8080)', 'hostPort (container "c" uses hostPorts 10, 8080)'),
    ({"c": {"appArmorProfile": {"type": "Unconfined"}}},
     'forbidden AppArmor profile (container "c" must not set AppArmor profile type to "Unconfined")',
     'forbidden AppArmor profile (container "c" must not set AppArmor profile type to "Unconfined")'),
    ({"pod": {"seLinuxOptions": {"type": "spc_t", "user": "root"}}},
     'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)',
     'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)'),
    ({"pod": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}, {"name": "net.ipv4.tcp_rmem", "value": "1"}]}},
     "forbidden sysctls (kernel.msgmax)", "forbidden sysctls (kernel.msgmax)"),
    ({"pod": {"seccompProfile": {"type": "Unconfined"}}},
     'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
     'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'),
    ({"c": {"allowPrivilegeEscalation": True}}, APE, None),
    ({"c": {"capabilities": None}},
     'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])', None),
    ({"c": {"runAsUser": 0}}, 'runAsUser=0 (container "c" must not set runAsUser=0)', None),
    ({"c": {"runAsNonRoot": False}},
     'runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false)', None),
    ({"pod": {"runAsNonRoot": None, "seccompProfile": None}},
     'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile '
     '(pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
     None),
]


@pytest.mark.parametrize(("change", "restricted", "baseline"), VIOLATIONS,
                         ids=[str(i) for i in range(len(VIOLATIONS))])
def test_each_violation_is_refused_with_upstreams_message(kube, change, restricted, baseline):
    pod = pod_with(change)
    if change.get("pod", {}).get("runAsNonRoot", 1) is None:
        pod["spec"]["securityContext"] = {}
    out = create(kube, "restricted", pod)
    assert out.returncode == 1
    assert out.stderr.strip() == refusal("restricted:latest", restricted)
    out = create(kube, "baseline", pod)
    if baseline is None:
        assert out.returncode == 0, out.stderr
        kubectl(kube, "delete", "pod", "p", "-n", "baseline", "--wait=false")
    else:
        assert out.returncode == 1
        assert out.stderr.strip() == refusal("baseline:latest", baseline)


def test_a_compliant_pod_is_admitted_and_unlabelled_namespaces_are_privileged(kube):
    out = create(kube, "restricted", pod_with({}, "ok"))
    assert out.returncode == 0 and out.stderr == "", out.stderr
    privileged = pod_with({"hostNetwork": True, "c": {"privileged": True, "allowPrivilegeEscalation": None}},
                          "anything")
    out = create(kube, "default", privileged)
    assert out.returncode == 0 and out.stderr == "", out.stderr


def test_the_version_label_picks_the_checks_of_that_version(kube):
    # before v1.22 restricted had no capabilities check of its own: baseline's applies
    out = create(kube, "old", pod_with({"c": {"capabilities": {"add": ["SYS_ADMIN"], "drop": []}}}))
    assert out.stderr.strip() == refusal("restricted:v1.21", 'non-default capabilities (container "c" must not '
                                         'include "SYS_ADMIN" in securityContext.capabilities.add)')
    # net.ipv4.tcp_rmem joined the allowed sysctls in v1.32 (latest here), not before
    sysctl = pod_with({"pod": {"sysctls": [{"name": "net.ipv4.tcp_rmem", "value": "4096 87380 6291456"}]}})
    assert create(kube, "v131", sysctl).stderr.strip() == refusal("baseline:v1.31",
                                                                  "forbidden sysctls (net.ipv4.tcp_rmem)")
    assert create(kube, "baseline", sysctl).returncode == 0


def test_warn_returns_the_warning_kubectl_prints_and_admits(kube):
    out = create(kube, "warned", pod_with({"hostPID": True}, "w"))
    assert out.returncode == 0
    assert out.stderr.strip() == 'Warning: would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)'
    assert kube.client.get(PODS, "w", "warned")["spec"]["hostPID"] is True


def test_workloads_get_warnings_not_refusals(kube):
    out = kubectl(kube, "create", "deployment", "web", "--image=nginx", "-n", "restricted")
    assert out.stderr.strip() == (
        'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container '
        '"nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container '
        '"nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container '
        '"nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set '
        'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
    assert kube.client.get(DEPLOYMENTS, "web", "restricted")
    out = kubectl(kube, "create", "cronjob", "tick", "--image=busybox", "--schedule=* * * * *", "-n", "baseline")
    assert out.stderr == ""  # baseline-compliant template: nothing to say
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "hostNetwork": True, "containers": [{"name": "j", "image": "busybox"}]}}}}
    out = create(kube, "baseline", job)
    assert out.returncode == 0
    assert out.stderr.strip() == 'Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'


def test_tightening_a_namespace_warns_about_its_existing_pods(kube):
    kubectl(kube, "create", "namespace", "tighten")
    for name in ("b-root", "a-root", "c-root"):
        create(kube, "tighten", pod_with({"c": {"runAsUser": 0}}, name))
    create(kube, "tighten", pod_with({"hostIPC": True}, "ipc"))
    create(kube, "tighten", pod_with({}, "fine"))
    out = kubectl(kube, "label", "namespace", "tighten", "pod-security.kubernetes.io/enforce=restricted")
    assert out.stdout.strip() == "namespace/tighten labeled"
    assert out.stderr.strip().splitlines() == [
        'Warning: existing pods in namespace "tighten" violate the new PodSecurity enforce level "restricted:latest"',
        "Warning: a-root (and 2 other pods): runAsUser=0",
        "Warning: ipc: host namespaces",
    ]
    # relaxing, or restating the same level, is not checked
    out = kubectl(kube, "label", "namespace", "tighten", "pod-security.kubernetes.io/enforce=baseline", "--overwrite")
    assert out.stderr == ""


def test_invalid_labels_are_refused_on_create_and_change(kube):
    out = kubectl(kube, "label", "namespace", "warned", "pod-security.kubernetes.io/enforce=strict",
                  "pod-security.kubernetes.io/audit-version=1.30", check=False)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [  # kubectl lists the causes
        'The Namespace "warned" is invalid: ',
        '* metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, '
        "baseline, restricted",
        '* metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.30": must be "latest" or '
        '"v1.x"']
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "bad", "labels": {"pod-security.kubernetes.io/warn-version": "v2.0"}}}
    out = kubectl(kube, "create", "-f", "-", input=json.dumps(namespace), check=False)
    assert out.stderr.strip() == (
        'The Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: '
        '"v2.0": must be "latest" or "v1.x"')


def test_pod_updates_are_checked_only_when_an_image_changes(kube):
    kubectl(kube, "create", "namespace", "later")
    create(kube, "later", pod_with({"c": {"runAsUser": 0}}, "r"))
    kubectl(kube, "label", "namespace", "later", "pod-security.kubernetes.io/enforce=restricted")
    kubectl(kube, "label", "pod", "r", "-n", "later", "touched=yes")  # labels: not significant
    out = kubectl(kube, "set", "image", "pod/r", "c=nginx:2", "-n", "later", check=False)
    assert out.returncode == 1
    assert 'pods "r" is forbidden: violates PodSecurity "restricted:latest": runAsUser=0' in out.stderr


ADMISSION_CONFIG = """\
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      audit: restricted
    exemptions:
      usernames: [trusted]
      namespaces: [free]
      runtimeClasses: [sandboxed]
"""


def audit_events(path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_configuration_defaults_exemptions_and_audit_annotations(tmp_path):
    config = tmp_path / "admission.yaml"
    config.write_text(ADMISSION_CONFIG)
    log = tmp_path / "audit.log"
    with MiniKube(controllers=False, scheduler=False, insecure_http=False, audit_log=str(log),
                  admission_control_config_file=str(config)) as kube:
        host = pod_with({"hostNetwork": True}, "host")
        out = create(kube, "default", host)  # unlabelled: the configured default, baseline
        assert out.stderr.strip() == refusal("baseline:latest", "host namespaces (hostNetwork=true)", "host")
        kubectl(kube, "create", "namespace", "free")
        assert create(kube, "free", host).returncode == 0  # exempt namespace
        kubectl(kube, "create", "-f", "-", input=json.dumps({  # the RuntimeClass admission plugin wants it to exist
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "sandboxed"},
            "handler": "sandboxed"}))
        sandboxed = pod_with({"hostNetwork": True, "runtimeClassName": "sandboxed"}, "sandboxed")
        assert create(kube, "default", sandboxed).returncode == 0  # exempt runtime class
        as_trusted = kubectl(kube, "--as=trusted", "--as-group=system:masters", "create", "-f", "-",
                             input=json.dumps(pod_with({"hostNetwork": True}, "trusted")), check=False)
        assert as_trusted.returncode == 0, as_trusted.stderr  # exempt user
        plain = pod_with({"pod": {"seccompProfile": None}}, "plain")
        assert create(kube, "default", plain).returncode == 0  # baseline passes; audit (restricted) notes it
        out = kubectl(kube, "label", "namespace", "free", "pod-security.kubernetes.io/enforce=restricted")
        assert out.stderr.strip() == ('Warning: namespace "free" is exempt from Pod Security, and the policy '
                                      "(enforce=restricted:latest) will be ignored")
        kube.server.security.auditor.log.close()
        creates = [e for e in audit_events(log) if e["verb"] == "create"
                   and e.get("objectRef", {}).get("resource") == "pods"]
    host, free, sandboxed, trusted, plain = creates  # in order
    assert host["responseStatus"]["code"] == 403
    assert host["annotations"] == {
        "pod-security.kubernetes.io/enforce-policy": "baseline:latest",
        "pod-security.kubernetes.io/audit-violations": 'would violate PodSecurity "restricted:latest": host '
                                                       "namespaces (hostNetwork=true)"}
    assert free["annotations"] == {"pod-security.kubernetes.io/exempt": "namespace"}
    assert sandboxed["annotations"] == {"pod-security.kubernetes.io/exempt": "runtimeClass"}
    assert trusted["annotations"] == {"pod-security.kubernetes.io/exempt": "user"}
    assert trusted["impersonatedUser"]["username"] == "trusted"
    assert plain["responseStatus"]["code"] == 201
    assert plain["annotations"] == {
        "pod-security.kubernetes.io/enforce-policy": "baseline:latest",
        "pod-security.kubernetes.io/audit-violations": 'would violate PodSecurity "restricted:latest": '
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost")'}


def test_an_invalid_configuration_stops_the_server(tmp_path):
    from mini_kube.apiserver.datadir import StartupError

    config = tmp_path / "admission.yaml"
    config.write_text(ADMISSION_CONFIG.replace("enforce: baseline", "enforce: strict").replace("[free]", "[Free]"))
    with pytest.raises(StartupError) as info:
        MiniKube(controllers=False, scheduler=False, admission_control_config_file=str(config)).start()
    assert str(info.value) == (
        'failed to initialize admission: couldn\'t init admission plugin "PodSecurity": [defaults.enforce: Invalid '
        'value: "strict": must be one of privileged, baseline, restricted, exemptions.namespaces[0]: Invalid value: '
        '"Free": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must '
        "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')]")


def test_ephemeral_containers_are_checked_like_the_others(kube):
    kubectl(kube, "create", "namespace", "debugged")
    kubectl(kube, "label", "namespace", "debugged", "pod-security.kubernetes.io/enforce=restricted")
    assert create(kube, "debugged", pod_with({}, "target")).returncode == 0
    out = kubectl(kube, "debug", "target", "-n", "debugged", "--image=busybox", "--container=dbg", "--profile=general",
                  check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'Error from server (Forbidden): pods "target" is forbidden: violates PodSecurity "restricted:latest": '
        'allowPrivilegeEscalation != false (container "dbg" must set securityContext.allowPrivilegeEscalation=false), '
        'unrestricted capabilities (container "dbg" must set securityContext.capabilities.drop=["ALL"]; container '
        '"dbg" must not include "SYS_PTRACE" in securityContext.capabilities.add)')
    kubectl(kube, "debug", "target", "-n", "debugged", "--image=busybox", "--container=ok",
                  "--profile=restricted")
    ephemeral = kube.client.get(PODS, "target", "debugged")["spec"]["ephemeralContainers"]
    assert [c["name"] for c in ephemeral] == ["ok"]
