"""A Pod's securityContext is validated as upstream's validatePodSpecSecurityContext does: kubectl gets a 422
naming each bad sysctl, ID or policy, and nothing is stored; well-formed sysctls (dots or slashes) are accepted."""

from __future__ import annotations

import json

from tests.helpers import kubectl


def _pod(name: str, security_context: dict, **spec: object) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"securityContext": security_context, **spec,
                                "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}})


def test_malformed_sysctl_names_are_refused_and_well_formed_ones_pass(mini_kube_session, kube_namespace):
    sysctls = [{"name": "foo-", "value": "bar"}, {"name": "kernel.shmmax", "value": "100000000"},
               {"name": "safe-and-unsafe", "value": "1"}, {"name": "bar..", "value": "42"},
               {"name": "kernel/shm_rmid_forced", "value": "1"}, {"name": "kernel.shmmax", "value": "2"}]
    result = kubectl(mini_kube_session, "create", "-n", kube_namespace, "-f", "-", check=False,
                     input=_pod("bad-sysctls", {"sysctls": sysctls}))
    assert result.returncode == 1
    err = result.stderr
    assert 'spec.securityContext.sysctls[0].name: Invalid value: "foo-": must have at most 253 characters and ' \
           r'match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$' in err
    assert 'spec.securityContext.sysctls[3].name: Invalid value: "bar.."' in err
    assert 'spec.securityContext.sysctls[5].name: Duplicate value: "kernel.shmmax"' in err
    assert "safe-and-unsafe" not in err and "shm_rmid_forced" not in err and "sysctls[1]" not in err
    assert kubectl(mini_kube_session, "get", "pod", "bad-sysctls", "-n", kube_namespace, check=False).returncode == 1

    good = [{"name": "kernel.shm_rmid_forced", "value": "1"}, {"name": "net/ipv4/ip_local_port_range",
                                                                   "value": "1024 65535"}]
    kubectl(mini_kube_session, "create", "-n", kube_namespace, "-f", "-", "--dry-run=server",
            input=_pod("good-sysctls", {"sysctls": good}))


def test_namespaced_sysctls_are_refused_with_the_host_namespace(mini_kube_session, kube_namespace):
    result = kubectl(mini_kube_session, "create", "-n", kube_namespace, "-f", "-", "--dry-run=server", check=False,
                     input=_pod("host-sysctls", {"sysctls": [{"name": "net.ipv4.ip_forward", "value": "1"},
                                                             {"name": "kernel/msgmax", "value": "1"}]},
                                hostNetwork=True, hostIPC=True))
    assert result.returncode == 1
    assert "spec.securityContext.sysctls[0].name: Invalid value: \"net.ipv4.ip_forward\": may not be specified " \
           "when 'hostNetwork' is true" in result.stderr
    assert "spec.securityContext.sysctls[1].name: Invalid value: \"kernel/msgmax\": may not be specified when " \
           "'hostIPC' is true" in result.stderr


def test_ids_and_policies_are_checked(mini_kube_session, kube_namespace):
    result = kubectl(mini_kube_session, "create", "-n", kube_namespace, "-f", "-", "--dry-run=server", check=False,
                     input=_pod("bad-ids", {"runAsUser": -1, "runAsGroup": 2**31, "fsGroup": -5,
                                            "supplementalGroups": [1, -2], "fsGroupChangePolicy": "Sometimes"},
                                hostPID=True, shareProcessNamespace=True))
    assert result.returncode == 1
    err = result.stderr
    for line in ("spec.securityContext.fsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive",
                 "spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
                 "spec.securityContext.runAsGroup: Invalid value: 2147483648: must be between 0 and 2147483647",
                 "spec.securityContext.supplementalGroups[1]: Invalid value: -2",
                 "spec.securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and "
                 "HostPID cannot both be enabled",
                 'spec.securityContext.fsGroupChangePolicy: Unsupported value: "Sometimes": supported values: '
                 '"Always", "OnRootMismatch"'):
        assert line in err, err
