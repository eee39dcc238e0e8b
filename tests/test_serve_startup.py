"""`mini-kube serve`'s start-up (issue #25, "Speed a newcomer feels"): nothing slow before its port opens. The
times themselves are bench/serve_ready_bench.py's (docs/benchmarks.md); these tests pin what makes them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

COMPONENTS = ("mini_kube.kubelet", "mini_kube.scheduler", "mini_kube.proxy", "mini_kube.ccm", "mini_kube.clusterdns",
              "mini_kube.controllers.kube_controller_manager")
# a real `serve`, stopped as soon as its API server listens: which component modules it had loaded by then, and
# whether the garbage collector ran meanwhile
UNTIL_LISTENING = """
import gc, json, os, sys
import mini_kube.apiserver.server as server
start = server.ApiServer.start
async def listening(self):
    await start(self)
    print(json.dumps({"loaded": sorted(m for m in sys.argv[2].split(",") if m in sys.modules),
                      "collecting": gc.isenabled()}))
    sys.stdout.flush()
    os._exit(0)
server.ApiServer.start = listening
from mini_kube.cli import main
main(["serve", "--data-dir", sys.argv[1], "--port", "0", "--dns-port", "0", "--nodes", "2"])
"""


@pytest.fixture(scope="module")
def listening(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = subprocess.run([sys.executable, "-c", UNTIL_LISTENING, str(tmp_path_factory.mktemp("serve") / "data"),
                          ",".join(COMPONENTS)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_serve_listens_before_loading_its_components(listening: dict) -> None:
    """The nodes, scheduler, controllers, cloud controller and DNS load after the port opens (and beside the
    loop): their flags are parsed without importing them."""
    assert listening["loaded"] == []


def test_serve_collects_no_garbage_while_it_starts(listening: dict) -> None:
    """Loading the API server makes hundreds of thousands of objects and next to no garbage: no collection walks
    them until everything has started (gc_policy.settle_after_start then freezes them and resumes)."""
    assert listening["collecting"] is False


def test_every_subcommand_still_parses_its_own_flags() -> None:
    """Each subcommand's parser is built alone when it runs: `mini-kube node --help` still shows node's."""
    from mini_kube.cli import PARSERS, build_parser

    for name in PARSERS:
        assert set(build_parser(name)._subparsers._group_actions[0].choices) == {name}  # type: ignore[union-attr]
    shown = subprocess.run([sys.executable, "-m", "mini_kube.cli", "node", "--help"], capture_output=True,
                           text=True, check=True, timeout=60).stdout
    assert "--node-runtime" in shown and "--index" in shown
    listed = subprocess.run([sys.executable, "-m", "mini_kube.cli", "--help"], capture_output=True, text=True,
                            check=True, timeout=60).stdout
    assert all(name in listed for name in PARSERS)
