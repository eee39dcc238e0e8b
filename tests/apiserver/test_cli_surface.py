"""The command line and the version users see (issue #10 item 17): every flag is documented, and the version
names mini-kube unambiguously while kubectl and the official client still parse it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import kubernetes
import pytest
from mini_kube.apiserver import VERSION

from mini_kube.cli import build_parser
from tests.helpers import kubectl


@pytest.mark.slow
def test_every_flag_has_help():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, command in commands.items():
        for action in command._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, (name, action.option_strings)
    assert "--etcd-servers" in subprocess.run([sys.executable, "-m", "mini_kube.cli", "serve", "--help"],
                                              capture_output=True, text=True, check=True).stdout


def test_version_names_mini_kube_and_clients_parse_it(mini_kube_session):
    version = json.loads(kubectl(mini_kube_session, "version", "-o", "json").stdout)["serverVersion"]
    assert version["gitVersion"] == f"v1.32.0+mini-kube.{VERSION}"
    assert (version["major"], version["minor"]) == ("1", "32")
    plain = kubectl(mini_kube_session, "version")
    assert f"Server Version: v1.32.0+mini-kube.{VERSION}" in plain.stdout and "WARNING" not in plain.stderr
    client = kubernetes.config.new_client_from_config(config_file=mini_kube_session.kubeconfig)
    try:
        assert kubernetes.client.VersionApi(client).get_code().git_version == f"v1.32.0+mini-kube.{VERSION}"
    finally:
        client.close()


def test_package_version_matches_the_reported_one():
    from importlib.metadata import version

    assert version("mini-kube") == VERSION
