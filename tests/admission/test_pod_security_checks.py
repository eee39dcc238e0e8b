"""The Pod Security checks one by one, on upstream's own test cases (k8s.io/pod-security-admission/policy
check_*_test.go): the same Pods give the same reason and detail, word for word."""

from __future__ import annotations

import pytest
from mini_kube.apiserver.admission.podsecurity import checks
from mini_kube.apiserver.admission.podsecurity.api import LevelVersion, Version
from mini_kube.apiserver.admission.podsecurity.evaluator import evaluate, forbidden_detail


def sc(**context):
    return {"securityContext": context}


def named(name, **fields):
    return {"name": name, **fields}


CASES = [
    (checks.se_linux_options(checks.SELINUX_TYPES_1_31), {},
     {"securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}}, "containers": [
         named("a", **sc(seLinuxOptions={"type": "container_t"})),
         named("b", **sc(seLinuxOptions={"type": "container_init_t"})),
         named("c", **sc(seLinuxOptions={"type": "container_kvm_t"})),
         named("d", **sc(seLinuxOptions={"type": "container_engine_t"})),
         named("e", **sc(seLinuxOptions={"type": "bar"})),
         named("f", **sc(seLinuxOptions={"user": "bar"})),
         named("g", **sc(seLinuxOptions={"role": "baz"}))]},
     "seLinuxOptions", 'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", '
                       '"foo"; user may not be set; role may not be set'),
    (checks.app_armor_profile, {"annotations": {
        "container.apparmor.security.beta.kubernetes.io/": "bogus",
        "container.apparmor.security.beta.kubernetes.io/a": "",
        "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
        "container.apparmor.security.beta.kubernetes.io/c": "localhost/",
        "container.apparmor.security.beta.kubernetes.io/d": "localhost/foo",
        "container.apparmor.security.beta.kubernetes.io/e": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/f": "unknown"}}, {},
     "forbidden AppArmor profiles", 'annotations must not set AppArmor profile type to '
     '"container.apparmor.security.beta.kubernetes.io/="bogus"", '
     '"container.apparmor.security.beta.kubernetes.io/e="unconfined"", '
     '"container.apparmor.security.beta.kubernetes.io/f="unknown""'),
    (checks.app_armor_profile, {}, {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
     "forbidden AppArmor profile", 'pod must not set AppArmor profile type to "Unconfined"'),
    (checks.proc_mount, {}, {"containers": [
        named("a"), named("b", securityContext={}), named("c", **sc(procMount="Default")),
        named("d", **sc(procMount="Unmasked")), named("e", **sc(procMount="other"))]},
     "procMount", 'containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"'),
    (checks.windows_host_process, {}, {"securityContext": {"windowsOptions": {"hostProcess": True}}, "containers": [
        named("a"), named("b", securityContext={}), named("c", **sc(windowsOptions={})),
        named("d", **sc(windowsOptions={"hostProcess": False})), named("e", **sc(windowsOptions={"hostProcess": True})),
        named("f", **sc(windowsOptions={"hostProcess": True}))]},
     "hostProcess", 'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true'),
    (checks.seccomp_profile_baseline_1_0, {"annotations": {
        "container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
        "container.seccomp.security.alpha.kubernetes.io/b": "unknown",
        "seccomp.security.alpha.kubernetes.io/pod": "unconfined"}},
     {"containers": [named("a"), named("b"), named("c")]},
     "seccompProfile", 'forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", '
     'container.seccomp.security.alpha.kubernetes.io/b="unknown", seccomp.security.alpha.kubernetes.io/pod="unconfined"'),
    (checks.seccomp_profile_restricted_1_19, {}, {"securityContext": {"seccompProfile": {"type": "Unconfined"}},
                                                  "containers": [named("a"), named("b"),
                                                                 named("c", **sc(seccompProfile={"type": "Unconfined"})),
                                                                 named("d", **sc(seccompProfile={"type": "Unconfined"}))]},
     "seccompProfile", 'pod and containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined"'),
    (checks.run_as_non_root, {}, {"containers": [named("a"), named("b")]},
     "runAsNonRoot != true", 'pod or containers "a", "b" must set securityContext.runAsNonRoot=true'),
    (checks.run_as_non_root, {}, {"securityContext": {"runAsNonRoot": True}, "containers": [
        named("a"), named("b", **sc(runAsNonRoot=True)), named("c", **sc(runAsNonRoot=False)),
        named("d", **sc(runAsNonRoot=False))]},
     "runAsNonRoot != true", 'containers "c", "d" must not set securityContext.runAsNonRoot=false'),
    (checks.capabilities_restricted_1_22, {}, {"containers": [
        named("a", **sc(capabilities={"add": ["FOO", "BAR"]})), named("b", **sc(capabilities={"add": ["BAR", "BAZ"]})),
        named("c", **sc(capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL", "FOO"]}))]},
     "unrestricted capabilities", 'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
     'containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add'),
    (checks.host_ports, {}, {"containers": [
        named("a", ports=[{"hostPort": 0}]), named("b", ports=[{"hostPort": 0}, {"hostPort": 20}]),
        named("c", ports=[{"hostPort": 0}, {"hostPort": 10}, {"hostPort": 30}])]},
     "hostPort", 'containers "b", "c" use hostPorts 10, 20, 30'),
    (checks.restricted_volumes, {}, {"volumes": [
        {"name": "a1", "emptyDir": {}}, {"name": "b1", "hostPath": {}}, {"name": "b2", "gitRepo": {}},
        {"name": "b3", "nfs": {}}, {"name": "c1"}]},
     "restricted volume types", 'volumes "b1", "b2", "b3", "c1" use restricted volume types "gitRepo", "hostPath", '
                                '"nfs", "unknown"'),
    (checks.sysctls(checks.SYSCTLS_1_0), {}, {"securityContext": {"sysctls": [
        {"name": "a"}, {"name": "b"}, {"name": "kernel.shm_rmid_forced"}]}}, "forbidden sysctls", "a, b"),
]


@pytest.mark.parametrize(("check", "meta", "spec", "reason", "detail"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_upstreams_cases_read_the_same(check, meta, spec, reason, detail):
    violation = check(meta, spec)
    assert violation is not None
    assert (violation.reason, violation.detail) == (reason, detail)


def test_init_containers_come_first_and_windows_pods_skip_the_linux_checks():
    spec = {"initContainers": [named("init")], "containers": [named("main")]}
    found = evaluate(LevelVersion("restricted", Version()), {}, spec)
    assert forbidden_detail(found).startswith('allowPrivilegeEscalation != false (containers "init", "main" must')
    windows = {**spec, "os": {"name": "windows"}, "securityContext": {"runAsNonRoot": True}}
    assert evaluate(LevelVersion("restricted", Version()), {}, windows) == []
    # before v1.25 the same Pod had to set them anyway
    assert [v.reason for v in evaluate(LevelVersion("restricted", Version(24)), {}, windows)] == [
        "allowPrivilegeEscalation != false", "unrestricted capabilities", "seccompProfile"]


def test_versions_pick_each_checks_revision():
    seccomp_annotation = {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}
    assert [v.reason for v in evaluate(LevelVersion("baseline", Version(18)), seccomp_annotation, {})] == [
        "seccompProfile"]
    assert evaluate(LevelVersion("baseline", Version(19)), seccomp_annotation, {}) == []  # fields from 1.19 on
    root = {"containers": [named("c", **sc(runAsUser=0, runAsNonRoot=True, allowPrivilegeEscalation=False,
                                            capabilities={"drop": ["ALL"]}, seccompProfile={"type": "RuntimeDefault"}))]}
    assert evaluate(LevelVersion("restricted", Version(22)), {}, root) == []  # runAsUser=0 counts from 1.23
    assert [v.reason for v in evaluate(LevelVersion("restricted", Version(23)), {}, root)] == ["runAsUser=0"]
    engine = {"securityContext": {"seLinuxOptions": {"type": "container_engine_t"}}}
    assert len(evaluate(LevelVersion("baseline", Version(30)), {}, engine)) == 1
    assert evaluate(LevelVersion("baseline", Version(31)), {}, engine) == []
    assert evaluate(LevelVersion("baseline", Version(99)), {}, engine) == []  # future versions: the newest checks
    assert evaluate(LevelVersion("privileged", Version()), {}, {"hostPID": True}) == []
