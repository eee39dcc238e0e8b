"""The install step that builds busybox's ash (`python -m mini_kube.build_ash`): its configuration, its one-line
answer where it cannot build, and that an installation that has it stops at once."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from mini_kube.kubelet.busybox_ash import ASH_DIR, installed_ash

from mini_kube.build_ash import CONFIG, configured


def test_config_sets_ash_over_allnoconfig():
    allnoconfig = ("CONFIG_HAVE_DOT_CONFIG=y\n# CONFIG_ASH is not set\n# CONFIG_FEATURE_SH_STANDALONE is not set\n"
                   "CONFIG_FEATURE_EDITING_MAX_LEN=0\n# CONFIG_CAT is not set\n")
    lines = configured(allnoconfig).splitlines()
    assert "CONFIG_ASH=y" in lines and "CONFIG_FEATURE_EDITING_MAX_LEN=1024" in lines
    assert "# CONFIG_FEATURE_SH_STANDALONE is not set" in lines  # other commands come from PATH, as the image's
    assert "# CONFIG_CAT is not set" in lines and "CONFIG_HAVE_DOT_CONFIG=y" in lines
    assert "CONFIG_SH_IS_ASH=y" in lines  # not in allnoconfig's text: added
    assert len(lines) == len(set(lines)) == len(CONFIG.split()) + 3  # and the three it leaves


def test_without_make_it_says_so_in_one_line_and_exits_0(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mini_kube.build_ash", "--rebuild"], capture_output=True,
                          text=True, timeout=60, env={"PATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.count("\n") == 1 and "not built: no `make` to build it with" in done.stdout, done.stdout
    assert not list(tmp_path.iterdir())  # nothing downloaded


def test_an_installation_that_has_it_stops_at_once():
    if installed_ash() is None:  # tests/kubelet/test_busybox_ash.py fails where it should have been built
        pytest.skip("no busybox ash installed here (`python -m mini_kube.build_ash` could not build it)")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mini_kube.build_ash"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.endswith(f": already built in {ASH_DIR}\n")
    assert time.monotonic() - started < 5
