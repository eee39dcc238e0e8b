"""Network namespaces held by pause processes, and sockets made inside them.

A namespace lives as long as a process in it: each is held by `sleep infinity` started under `unshare`, with
PR_SET_PDEATHSIG so that the holder dies with the thread that started it (a crash leaves nothing behind): set by
`setpriv`, the first program of its command line (`DIE_WITH_PARENT`), not by a preexec_fn in the spawning
process, so the spawn is a vfork and costs the same in a server of any size (a preexec_fn makes Python fork: 38 ms
for a 600 MB process, on the thread that spawns). It is
named by its holder: `/proc/<pid>/ns/net`. A socket belongs to the namespace of the thread that created it, so
`sockets_in` makes them with the calling thread inside the namespace for just that long (setns is per thread);
the socket then serves from any thread (asyncio included) and its traffic stays in that namespace.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import select
import shlex
import shutil
import socket
import subprocess
from functools import cache
from typing import Any

log = logging.getLogger("mini-kube.network")
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
# prefix of a command whose process gets SIGKILL when the thread that spawned it ends (kept across its execs)
DIE_WITH_PARENT = ("setpriv", "--pdeathsig", "KILL", "--")

READY = b"R"  # what a holder with a setup writes on its stdout once done

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def setns(path: str, nstype: int = CLONE_NEWNET) -> None:
    """Move the calling thread into the namespace at `path`."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(fd, nstype) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


class Holder:
    """A process that keeps namespaces alive: `unshare --net [--mount] [--uts] [--ipc] [--pid] sleep infinity`,
    or one that joins existing ones first (`join`: kind -> /proc/<pid>/ns/<kind> path, entered by nsenter, which
    then execs unshare: the holder is still one process). With `user`, the namespaces are made in a new user
    namespace, which owns them, and the holder is its process (its IDs mapped by `map_ids`). `setup`, a shell
    command, runs inside the namespaces before the sleep (the same process, which execs sleep once it has
    succeeded): they are ready, set up, when `wait_ready` (or `ready`, on the event loop) returns, and its failure
    is the holder's."""

    def __init__(self, *, mount: bool = False, uts: bool = False, pid: bool = False, ipc: bool = False,
                 net: bool = True, join: dict[str, str] | None = None, user: bool = False, setup: str = "") -> None:
        args = (["unshare"] + (["--user"] if user else []) + (["--net"] if net else [])
                + (["--mount", "--propagation", "private"] if mount else [])
                + (["--uts"] if uts else []) + (["--ipc"] if ipc else [])
                + (["--pid", "--fork", "--kill-child"] if pid else []))
        if join:
            args = ["nsenter", *(f"--{kind}={path}" for kind, path in join.items()), "--", *args]
        # with a setup, the holder says on its stdout that it is done (`ready` waits for that word)
        hold = (["sh", "-c", f"{setup} && printf {READY.decode()} && exec sleep infinity >/dev/null"] if setup
                else ["sleep", "infinity"])
        self.proc = subprocess.Popen([*DIE_WITH_PARENT, *args, *hold], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE if setup else subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, close_fds=True)
        self.pid = self.proc.pid
        self.forks = pid

    @property
    def netns(self) -> str:
        return f"/proc/{self.pid}/ns/net"

    @property
    def pidns(self) -> str:
        """The PID namespace its processes' children join (with `pid=True`: killing the holder kills them all)."""
        return f"/proc/{self.pid}/ns/pid_for_children"

    def wait_ready(self, timeout: float = 5.0) -> None:
        """Wait until the namespaces exist and their setup is done (the holder sleeps); raises with unshare's or
        the setup's error if it failed."""
        import time

        deadline = time.monotonic() + timeout
        own = os.readlink("/proc/self/ns/net")
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode(errors="replace").strip()
                raise OSError(f"cannot make a namespace: {err or f'exit {self.proc.returncode}'}")
            with contextlib.suppress(OSError, ValueError):
                if os.readlink(self.netns) != own and os.readlink(f"/proc/{self._sleeper()}/exe").endswith("sleep"):
                    return
            time.sleep(0.0005)
        raise TimeoutError("namespace holder did not start")

    async def ready(self, timeout: float = 5.0) -> None:
        """`wait_ready` for a holder with a setup, on the event loop without a thread or polling: until it says
        it is done; raises with the setup's error if it failed (the holder then exits)."""
        import asyncio

        assert self.proc.stdout is not None
        loop = asyncio.get_running_loop()
        fd = self.proc.stdout.fileno()
        said: asyncio.Future[bytes] = loop.create_future()

        def readable() -> None:
            if not said.done():
                said.set_result(os.read(fd, len(READY)))

        loop.add_reader(fd, readable)
        try:
            word = await asyncio.wait_for(said, timeout)
        except TimeoutError:
            raise TimeoutError("namespace holder did not start") from None
        finally:
            loop.remove_reader(fd)
        if word != READY:  # it has ended: its stdout closed without the word
            await loop.run_in_executor(None, self._failed)

    def _failed(self) -> None:
        """Raise with what the ended holder said on stderr."""
        self.proc.wait()
        err = (self.proc.stderr.read() if self.proc.stderr else b"").decode(errors="replace").strip()
        raise OSError(f"cannot make a namespace: {err or f'exit {self.proc.returncode}'}")

    def _sleeper(self) -> int:
        """The process that sleeps once the namespaces are ready: the holder, or with a PID namespace its child
        (the namespace's first process). ValueError while it has not been forked yet."""
        if not self.forks:
            return self.pid
        with open(f"/proc/{self.pid}/task/{self.pid}/children", encoding="ascii") as handle:
            children = handle.read().split()
        if not children:
            raise ValueError("not forked yet")
        return int(children[0])

    @property
    def userns(self) -> str:
        return f"/proc/{self.pid}/ns/user"

    def map_ids(self, uid_map: str, gid_map: str) -> None:
        """Write the user namespace's ID maps (once, before anything runs in it), as a runtime writes them."""
        for kind, lines in (("uid_map", uid_map), ("gid_map", gid_map)):
            with open(f"/proc/{self.pid}/{kind}", "w", encoding="ascii") as handle:
                handle.write(lines)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, wait: float = 0.0) -> None:
        """Kill the holder. With `wait` (seconds, blocking) and a PID namespace, until every process in it has
        gone too: its first process, which the kernel kills on the holder's death, exits only after them."""
        first = None
        if wait and self.forks:
            with contextlib.suppress(OSError, ValueError, IndexError), \
                    open(f"/proc/{self.pid}/task/{self.pid}/children", encoding="ascii") as handle:
                first = os.pidfd_open(int(handle.read().split()[0]))
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe:
                pipe.close()
        if first is not None:
            try:
                select.select([first], [], [], wait)  # readable once it has exited
            finally:
                os.close(first)


def run_in(netns: str, script: str) -> None:
    """Run `ip -batch` commands inside a network namespace (one process for all of them)."""
    result = subprocess.run(["nsenter", f"--net={netns}", "ip", "-batch", "-"], input=script.encode(),
                            capture_output=True, check=False)
    if result.returncode != 0:
        raise OSError(f"ip in {netns}: {result.stderr.decode(errors='replace').strip()}")


def write_sysctls(netns: str, values: dict[str, str]) -> None:
    """Write sysctls (paths under /proc/sys, e.g. `net/ipv4/conf/mk0/route_localnet`) of a network namespace: a
    process inside it writes them (/proc/sys/net shows the writer's namespace)."""
    script = " && ".join(f"printf %s {shlex.quote(value)} > {shlex.quote('/proc/sys/' + path)}"
                         for path, value in values.items())
    result = subprocess.run(["nsenter", f"--net={netns}", "sh", "-c", script], capture_output=True, check=False)
    if result.returncode != 0:
        raise OSError(f"sysctls in {netns}: {result.stderr.decode(errors='replace').strip()}")


def sockets_in(netns: str, family: int, type: int, count: int) -> list[socket.socket]:
    """`count` sockets created inside the network namespace `netns` by the calling thread, which enters it and
    comes straight back: nothing else runs on the thread in between, and one setns pair serves them all."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        setns(netns)
        try:
            return [socket.socket(family, type) for _ in range(count)]
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:  # cannot happen: we came from there with the same rights
                log.critical("could not return from %s: %s", netns, os.strerror(ctypes.get_errno()))
                os.abort()  # a thread left in the wrong namespace would send traffic into the wrong network
    finally:
        os.close(home)


def socket_in(netns: str | None, family: int = socket.AF_INET, type: int = socket.SOCK_STREAM) -> socket.socket:
    """A socket created inside the network namespace `netns` (None: this thread's own)."""
    if netns is None:
        return socket.socket(family, type)
    return sockets_in(netns, family, type, 1)[0]


@cache
def can_make_namespaces() -> tuple[bool, str]:
    """Whether this process can make network and mount namespaces (and has the tools), with the reason."""
    for tool in ("unshare", "nsenter", "setpriv", "ip"):
        if shutil.which(tool) is None:
            return False, f"the `{tool}` command is not installed"
    holder = None
    try:
        holder = Holder(mount=True)
        holder.wait_ready()
        run_in(holder.netns, "link add mkprobe type bridge\n")
        return True, ""
    except OSError as exc:
        return False, str(exc)
    finally:
        if holder is not None:
            holder.close()


async def open_connection_in(netns: str | None, host: str, port: int) -> tuple[Any, Any]:
    """asyncio streams of a TCP connection to host:port made from inside `netns` (None: this namespace)."""
    import asyncio

    if netns is None:
        return await asyncio.open_connection(host, port)
    sock = socket_in(netns, socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
        return await asyncio.open_connection(sock=sock)
    except BaseException:  # a refusal, and a cancellation too (a timeout): the socket is closed here, at once
        sock.close()
        raise
