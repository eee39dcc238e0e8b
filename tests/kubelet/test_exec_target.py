"""`kubectl exec` enters the container's command, which the kubelet finds as the first child of the container's
supervisor (kubelet/containerinit.py). The supervisor used to start `/sbin/ldconfig -p` while importing
(ctypes.util.find_library), so an exec in that moment entered the short-lived ldconfig instead and nsenter failed
(`cannot open /proc/<pid>/ns/uts`, exit code 1): the kubelet bench's occasional non-Success exec status (about 1
in 300 execs before the kubelet waited for the command's exec). The supervisor starts no process but the
command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mini_kube.kubelet

INIT = Path(mini_kube.kubelet.__file__).with_name("containerinit.py")
STARTS = ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn", "os.system")
PROBE = """
import runpy, sys
started = []
sys.addaudithook(lambda event, args: started.append(event) if event in {starts!r} else None)
runpy.run_path({init!r}, run_name="containerinit")  # its module level, as `python -I -S containerinit.py` runs it
print(started)
"""


def test_the_supervisor_starts_no_process_of_its_own():
    out = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE.format(starts=STARTS, init=str(INIT))],
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]", out.stdout
