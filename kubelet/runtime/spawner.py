"""Containers' inits started by a zygote (kubelet/init_spawner.py): one small process per runtime, started at its
first container, forks each init with the Pod's namespaces joined, and each process exec'd into a running
container (`kubectl exec`, exec probes), so a start costs a fork instead of an interpreter's start-up and imports.
It dies with the kubelet's thread that started it, and what it started with it.

The kubelet keeps what a subprocess gives it: the process's pid, pipes for its stdin, stdout and stderr, and its
end (the spawner reaps it and says how it ended).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import marshal
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_kube.network.namespaces import DIE_WITH_PARENT

log = logging.getLogger("mini-kube.kubelet")
PROGRAM = Path(__file__).resolve().parent.parent / "init_spawner.py"
KILLED = int(signal.SIGKILL)  # how an init ended when its spawner went first (the kernel killed it)


class Spawned:
    """A process the spawner started: its pid, its stdio as the kubelet holds it, and its end."""

    def __init__(self, pid: int, stdin: Any, stdout: Any, stderr: Any, ended: asyncio.Future[int]) -> None:
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self._ended = ended

    @property
    def returncode(self) -> int | None:
        return self._ended.result() if self._ended.done() else None

    async def wait(self) -> int:
        """Its exit code, or -N when signal N ended it (as asyncio's processes say)."""
        return await asyncio.shield(self._ended)


class SpawnedInit(Spawned):
    """An init the spawner started: what the runtime needs of a process."""

    stdin: asyncio.WriteTransport | None
    stdout: asyncio.StreamReader
    stderr: asyncio.StreamReader

    async def wait(self) -> int:
        code = await super().wait()
        if self.stdin is not None and not self.stdin.is_closing():
            self.stdin.close()
        return code


class SpawnedProcess(Spawned):
    """A process exec'd into a container by the spawner: what asyncio's subprocesses give (pid, a stdin writer,
    stdout and stderr readers, wait, communicate, returncode; no pipes where its stdio is a terminal)."""

    stdin: asyncio.StreamWriter | None
    stdout: asyncio.StreamReader | None
    stderr: asyncio.StreamReader | None

    async def communicate(self) -> tuple[bytes, bytes]:
        """With nothing for its stdin: all it writes to stdout and stderr, once it has ended."""
        if self.stdin is not None:
            self.stdin.close()
        out, err = await asyncio.gather(*(reader.read() if reader is not None else _nothing()
                                          for reader in (self.stdout, self.stderr)))
        await self.wait()
        return out, err


async def _nothing() -> bytes:
    return b""


class InitSpawner:
    """The kubelet's end of the spawner's socket: requests in order, answers in the same order, ends by pid."""

    def __init__(self, init_program: Callable[[], str]) -> None:
        self.init_program = init_program  # the init's file, compiled on first use
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._waiting: collections.deque[asyncio.Future[tuple[int, asyncio.Future[int]]]] = collections.deque()
        self._ends: dict[int, asyncio.Future[int]] = {}

    def _ensure(self, loop: asyncio.AbstractEventLoop) -> socket.socket:
        if self._sock is not None:
            return self._sock
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [*DIE_WITH_PARENT, sys.executable, "-I", "-S", str(PROGRAM), str(theirs.fileno()), self.init_program()],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=(theirs.fileno(),))
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        loop.add_reader(ours.fileno(), self._read, loop)
        self._sock = ours
        return ours

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        assert self._sock is not None
        while True:
            try:
                message = self._sock.recv(1 << 12)
            except BlockingIOError:
                return
            except OSError:
                message = b""
            if not message:
                self._lost(loop)
                return
            answer = marshal.loads(message)
            if answer[0] == "spawned":
                ended = loop.create_future()
                self._ends[answer[1]] = ended
                waiter = self._waiting.popleft()
                if not waiter.done():
                    waiter.set_result((answer[1], ended))
            else:
                pid: int = answer[1]
                status: int = answer[2]
                gone = self._ends.pop(pid, None)
                if gone is not None and not gone.done():
                    gone.set_result(os.waitstatus_to_exitcode(status))

    def _lost(self, loop: asyncio.AbstractEventLoop) -> None:
        """The spawner is gone (killed, or closed): so is every init it started; the next start makes another."""
        sock, proc = self._sock, self._proc
        self._sock = self._proc = None
        if sock is not None:
            loop.remove_reader(sock.fileno())
            sock.close()
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait()
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_exception(OSError("the container init spawner exited"))
        for ended in self._ends.values():
            if not ended.done():
                ended.set_result(-KILLED)
        self._ends.clear()

    def _send(self, request: tuple[str, str | None, dict[str, str] | None],
              fds: list[int]) -> asyncio.Future[tuple[int, asyncio.Future[int]]]:
        """Send a request with the descriptors the child gets; its pid, and its end, once spawned."""
        loop = asyncio.get_running_loop()
        sock = self._ensure(loop)
        waiter: asyncio.Future[tuple[int, asyncio.Future[int]]] = loop.create_future()
        socket.send_fds(sock, [marshal.dumps(request)], fds)
        self._waiting.append(waiter)
        return waiter

    async def start(self, spec_file: str, namespaces: dict[str, str], started: int, *, stdin: bool,
                    limit: int) -> SpawnedInit:
        """The init of `spec_file` in `namespaces` (kind -> /proc/<pid>/ns/<kind> path), writing its command's
        start to `started` (the write end of a pipe), with a pipe for stdin when asked (else /dev/null)."""
        loop = asyncio.get_running_loop()
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        in_r, in_w = os.pipe2(os.O_CLOEXEC) if stdin else (os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC), -1)
        try:
            waiter = self._send(("init", spec_file, namespaces), [in_r, out_w, err_w, started])
        except BaseException:
            for fd in (out_r, err_r, in_w):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        readers = [await _reader(loop, fd, limit) for fd in (out_r, err_r)]
        writer = None
        if in_w >= 0:
            writer, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(in_w, "wb", 0))
        pid, ended = await waiter
        return SpawnedInit(pid, writer, readers[0], readers[1], ended)

    async def enter(self, spec: dict[str, object], argv: list[str], *, terminal: int | None = None) -> SpawnedProcess:
        """A process running `argv` in a container (the init's `enter` with `spec`: the container's pid, the
        identity, environment and cgroups it gets, tty), with pipes for its stdin, stdout and stderr, or the
        terminal `terminal` (a pty's slave) as all three."""
        loop = asyncio.get_running_loop()
        request = os.memfd_create("exec", os.MFD_CLOEXEC)  # of any size (an environment may be large)
        try:
            os.write(request, marshal.dumps((spec, argv)))
            os.lseek(request, 0, os.SEEK_SET)
            if terminal is not None:
                waiter = self._send(("enter", None, None), [terminal, terminal, terminal, request])
                pid, ended = await waiter
                return SpawnedProcess(pid, None, None, None, ended)
            in_r, in_w = os.pipe2(os.O_CLOEXEC)
            out_r, out_w = os.pipe2(os.O_CLOEXEC)
            err_r, err_w = os.pipe2(os.O_CLOEXEC)
            try:
                waiter = self._send(("enter", None, None), [in_r, out_w, err_w, request])
            except BaseException:
                for fd in (in_w, out_r, err_r):
                    os.close(fd)
                raise
            finally:
                for fd in (in_r, out_w, err_w):
                    os.close(fd)
        finally:
            os.close(request)
        stdout, stderr = await _reader(loop, out_r, 1 << 16), await _reader(loop, err_r, 1 << 16)
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop)), os.fdopen(in_w, "wb", 0))
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        pid, ended = await waiter
        return SpawnedProcess(pid, stdin, stdout, stderr, ended)

    def close(self) -> None:
        """Stop the spawner (what it started dies with it)."""
        if self._sock is not None:
            with contextlib.suppress(RuntimeError):
                self._lost(asyncio.get_running_loop())


async def _reader(loop: asyncio.AbstractEventLoop, fd: int, limit: int) -> asyncio.StreamReader:
    """A stream reading the pipe `fd` (which it then owns)."""
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0))
    return reader
