"""agnhost's subcommands as local processes on 127.0.0.1, answering what upstream's Go source answers
(test/images/agnhost/<subcommand>, Kubernetes v1.32): exact bodies, status codes, JSON and exit codes."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

HOST = "127.0.0.1"


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def agnhost(*args: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    """Run `python -m mini_kube.kubelet.agnhost ARGS` bound to 127.0.0.1; killed at the end."""
    environment = {**os.environ, "AGNHOST_BIND_ADDRESS": HOST, **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.kubelet.agnhost", *args], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def get(port: int, path: str, method: str = "GET", attempts: int = 100) -> tuple[int, dict[str, str], str]:
    """One request, retried while the server is still starting."""
    for _ in range(attempts):
        conn = http.client.HTTPConnection(HOST, port, timeout=10)
        try:
            conn.request(method, path)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
        except ConnectionRefusedError:
            time.sleep(0.05)
        finally:
            conn.close()
    raise AssertionError(f"nothing listens on {port}")


def wait_listening(port: int) -> None:
    get(port, "/healthz")


def udp_ask(port: int, text: str) -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        sock.sendto(text.encode(), (HOST, port))
        return sock.recvfrom(2048)[0].decode()


def test_no_subcommand_prints_usage_and_unknown_ones_fail() -> None:
    done = subprocess.run([sys.executable, "-m", "mini_kube.kubelet.agnhost"], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0 and "Available Commands:" in done.stdout and "netexec" in done.stdout
    done = subprocess.run([sys.executable, "-m", "mini_kube.kubelet.agnhost", "netexec", "--bogus=1"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "Error: unknown flag: --bogus" in done.stderr
    done = subprocess.run([sys.executable, "-m", "mini_kube.kubelet.agnhost", "netexec", "--http-port=x"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and 'invalid argument "x" for "--http-port" flag' in done.stderr


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 2), (signal.SIGINT, 1)])
def test_pause_prints_paused_and_exits_as_upstream_on_signals(signum: int, code: int) -> None:
    with agnhost("pause") as proc:
        assert proc.stdout.readline() == "Paused\n"
        proc.send_signal(signum)
        assert proc.wait(timeout=10) == code


def test_serve_hostname_http_answers_the_hostname_with_go_headers() -> None:
    port = free_port()
    with agnhost("serve-hostname", f"--port={port}", "--close"):
        status, headers, body = get(port, "/anything")
        assert (status, body) == (200, socket.gethostname())
        assert headers["content-type"] == "text/plain; charset=utf-8"
        assert headers["connection"] == "close"
        assert "date" in headers and "server" not in headers


def test_serve_hostname_tcp_and_udp_and_refuses_http_with_them() -> None:
    port = free_port()
    with agnhost("serve-hostname", "--http=false", "--tcp", "--udp", "--port", str(port)):
        for _ in range(100):
            with contextlib.suppress(ConnectionRefusedError), socket.create_connection((HOST, port), 5) as conn:
                assert conn.recv(1024).decode() == socket.gethostname()
                break
            time.sleep(0.05)
        else:
            raise AssertionError("serve-hostname --tcp never listened")
        assert udp_ask(port, "anything") == socket.gethostname()
    done = subprocess.run([sys.executable, "-m", "mini_kube.kubelet.agnhost", "serve-hostname", "--tcp"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "Can't server TCP/UDP mode and HTTP mode at the same time" in done.stderr


@pytest.fixture(scope="module")
def netexec() -> Iterator[tuple[int, int]]:
    http_port, udp_port = free_port(), free_port(socket.SOCK_DGRAM)
    with agnhost("netexec", f"--http-port={http_port}", "--udp-port", str(udp_port)):
        wait_listening(http_port)
        yield http_port, udp_port


def test_netexec_simple_endpoints(netexec: tuple[int, int]) -> None:
    port, _udp = netexec
    assert get(port, "/hostname")[::2] == (200, socket.gethostname())
    assert get(port, "/hostName")[::2] == (200, socket.gethostname())
    status, _headers, body = get(port, "/clientip")
    assert status == 200 and body.startswith("127.0.0.1:") and body.split(":")[1].isdigit()
    assert get(port, "/echo?msg=hello%20there")[::2] == (200, "hello there")
    assert get(port, "/echo?msg=teapot&code=418")[::2] == (418, "teapot")
    assert get(port, "/echo?msg=x&code=abc")[::2] == (200, "argument 'code' must be an integer or empty, got \"abc\"\n")
    assert get(port, "/healthz")[::2] == (200, "")
    assert get(port, "/readyz")[::2] == (200, "ok")
    status, _headers, body = get(port, "/")
    assert status == 200 and body.startswith("NOW: 20") and " m=+" in body
    assert get(port, "/header?key=Host")[::2] == (200, "")
    assert json.loads(get(port, "/header")[2]) == {"Accept-Encoding": ["identity"]}


def test_netexec_shell_answers_output_and_error_as_json(netexec: tuple[int, int]) -> None:
    port, _udp = netexec
    assert get(port, "/shell?shellCommand=echo%20hi")[::2] == (200, '{"output":"hi\\n"}')
    assert get(port, "/shell?cmd=echo%20oops%3B%20exit%203")[::2] == (200, '{"error":"exit status 3","output":"oops\\n"}')
    assert get(port, "/shell?shellCommand=true")[::2] == (200, "{}")


def test_netexec_dial_over_http_and_udp_with_errors(netexec: tuple[int, int]) -> None:
    port, udp = netexec
    hostname = socket.gethostname()
    status, _h, body = get(port, f"/dial?request=hostname&host={HOST}&port={port}&protocol=http&tries=2")
    assert (status, json.loads(body)) == (200, {"responses": [hostname, hostname]})
    status, _h, body = get(port, f"/dial?request=hostname&host={HOST}&port={udp}&protocol=udp&tries=1")
    assert (status, body) == (200, json.dumps({"responses": [hostname]}, separators=(",", ":")))
    status, _h, body = get(port, f"/dial?request=echo%20Hi&host={HOST}&port={udp}&protocol=udp")
    assert json.loads(body) == {"responses": ["hi"]}
    closed = free_port()
    status, _h, body = get(port, f"/dial?request=hostname&host={HOST}&port={closed}&protocol=http")
    assert status == 200
    assert json.loads(body) == {"errors": [f'Get "http://{HOST}:{closed}/hostname": dial tcp {HOST}:{closed}: '
                                           "connect: connection refused"]}
    status, headers, body = get(port, f"/dial?host={HOST}&port={port}")
    assert (status, body) == (400, "request parameter not specified. <nil>\n")
    assert headers["x-content-type-options"] == "nosniff"
    assert get(port, f"/dial?request=x&host={HOST}&port={port}&protocol=tcp")[::2] == (
        400, "unsupported protocol. tcp\n")
    assert get(port, f"/dial?request=x&host={HOST}&port={port}&tries=z")[::2] == (
        400, 'tries parameter is invalid. strconv.Atoi: parsing "z": invalid syntax\n')


def test_netexec_udp_server_commands(netexec: tuple[int, int]) -> None:
    _port, udp = netexec
    assert udp_ask(udp, "hostname\n") == socket.gethostname()
    assert udp_ask(udp, "echo Hello") == "hello"
    assert udp_ask(udp, "clientip").startswith("127.0.0.1:")


def test_netexec_exit_and_shutdown_end_the_process_with_the_code() -> None:
    port = free_port()
    with agnhost("netexec", f"--http-port={port}", "--udp-port=-1") as proc:
        wait_listening(port)
        assert get(port, "/healthz")[0] == 412  # no UDP server: never ready, as upstream's
        assert get(port, "/exit?code=x")[::2] == (200, "argument 'code' must be an integer [0-127] or empty, "
                                                       'got "x"\n')
        assert get(port, "/exit?timeout=5x")[0] == 200 and proc.poll() is None
        with contextlib.suppress(http.client.RemoteDisconnected, ConnectionResetError):
            get(port, "/exit?code=7")
        assert proc.wait(timeout=10) == 7
    port = free_port()
    with agnhost("netexec", f"--http-port={port}", "--udp-port=-1") as proc:
        wait_listening(port)
        assert get(port, "/exit?code=4&timeout=1s")[0] == 200
        assert proc.wait(timeout=10) == 4
    port = free_port()
    with agnhost("netexec", f"--http-port={port}", "--udp-port=-1") as proc:
        wait_listening(port)
        with contextlib.suppress(http.client.RemoteDisconnected, ConnectionResetError):
            get(port, "/shutdown")
        assert proc.wait(timeout=10) == 0


def test_netexec_sigterm_exits_zero() -> None:
    port = free_port()
    with agnhost("netexec", f"--http-port={port}", "--udp-port=-1") as proc:
        wait_listening(port)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


def test_test_webserver_serves_files_from_root_with_upstream_headers(tmp_path) -> None:
    (tmp_path / "hello.txt").write_text("hi there\n")
    port = free_port()
    with agnhost("test-webserver", f"--port={port}"):
        status, headers, body = get(port, str(tmp_path / "hello.txt"))
        assert (status, body) == (200, "hi there\n")
        assert headers["cache-control"] == "private" and headers["access-control-allow-origin"] == "*"
        assert headers["access-control-allow-methods"] == "GET, POST, OPTIONS"
        assert get(port, str(tmp_path / "missing"))[::2] == (404, "404 page not found\n")


def test_porter_serves_each_ports_value() -> None:
    first, second = free_port(), free_port()
    env = {f"SERVE_PORT_{first}": "foo", f"SERVE_PORT_{second}": "bar=baz"}
    with agnhost("porter", env=env):
        assert get(first, "/whatever")[::2] == (200, "foo")
        assert get(second, "/")[::2] == (200, "bar=baz")
    with agnhost("porter", "--json-response", env=env):
        status, headers, body = get(first, "/", method="POST")
        assert (status, body) == (200, '{"Method":"POST","Body":"foo"}')
        assert headers["content-type"] == "application/json"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mini_kube.kubelet.agnhost", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})})


def test_entrypoint_tester_prints_all_its_args_as_go_prints_os_args() -> None:
    done = run("entrypoint-tester", "override", "arguments")
    assert (done.returncode, done.stdout) == (0, "[/agnhost entrypoint-tester override arguments]\n")
    done = run("entrypoint-tester", "a", env={"AGNHOST_ARGV0": "/agnhost-2"})
    assert done.stdout == "[/agnhost-2 entrypoint-tester a]\n"


def test_mounttest_prints_upstreams_lines_in_upstreams_order(tmp_path) -> None:
    new, existing = tmp_path / "new", tmp_path / "existing"
    existing.write_text("hello\n")
    existing.chmod(0o640)
    done = run("mounttest", f"--new_file_0644={new}", f"--file_mode={new}", "--file_perm", str(new),
               f"--file_content={existing}", f"--fs_type={tmp_path}", f"--file_owner={existing}")
    assert done.returncode == 0, done.stdout
    kind = subprocess.run(["stat", "-f", "-c", "%t", str(tmp_path)], capture_output=True, text=True).stdout.strip()
    fs = "tmpfs" if int(kind, 16) == 0x01021994 else str(int(kind, 16))
    assert done.stdout.splitlines() == [
        f'mount type of "{tmp_path}": {fs}',
        f'content of file "{new}": mount-tester new file',
        "",  # the content's own newline, then Printf's
        f'mode of file "{new}": -rw-r--r--',
        f'perms of file "{new}": -rw-r--r--',
        f'owner UID of "{existing}": {os.getuid()}',
        f'owner GID of "{existing}": {os.getgid()}',
        f'content of file "{existing}": hello',
        "",
    ]
    assert (new.stat().st_mode & 0o777) == 0o644
    done = run("mounttest", f"--new_file_0777={tmp_path / 'x'}", f"--file_mode={tmp_path}",
               f"--file_perm={tmp_path}")
    assert done.stdout.splitlines()[2:] == [f'mode of file "{tmp_path}": d{go_perm(tmp_path)}',
                                            f'perms of file "{tmp_path}": -{go_perm(tmp_path)}']
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o777  # the umask is cleared first
    done = run("mounttest", f"--file_content={tmp_path / 'missing'}")
    assert done.returncode == 1
    assert done.stdout == (f'error reading file content for "{tmp_path / "missing"}": open {tmp_path / "missing"}: '
                           "no such file or directory\n")


def go_perm(path) -> str:
    mode = path.stat().st_mode
    return "".join("rwxrwxrwx"[i] if mode & (1 << (8 - i)) else "-" for i in range(9))


def test_mounttest_reads_tmpfs_as_tmpfs() -> None:
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    done = run("mounttest", "--fs_type=/dev/shm", "--file_mode=/tmp", "--file_perm=/tmp")
    lines = done.stdout.splitlines()
    assert lines[0] == 'mount type of "/dev/shm": tmpfs'
    assert lines[1:] == ['mode of file "/tmp": dtrwxrwxrwx', 'perms of file "/tmp": -rwxrwxrwx']


def test_logs_generator_writes_its_lines_over_the_duration() -> None:
    start = time.monotonic()
    done = run("logs-generator", "--log-lines-total", "4", "-d", "1s")
    assert done.returncode == 0 and 0.9 < time.monotonic() - start < 30
    lines = done.stderr.splitlines()
    assert len(lines) == 4
    for number, line in enumerate(lines):
        header, message = line.split("] ", 1)
        assert header.startswith("I") and header.endswith("logs_generator.go:67")
        line_id, method, url, status = message.split(" ")
        assert int(line_id) == number and method in ("GET", "POST", "PUT") and 200 <= int(status) < 600
        assert url.startswith("/api/v1/namespaces/") and url.split("/")[4] in ("kube-system", "default", "ns")
    assert run("logs-generator", "-t", "0", "--run-duration=1s").returncode == 255


@pytest.mark.slow
def test_liveness_is_healthy_for_ten_seconds_then_fails() -> None:
    with socket.socket() as probe:
        if probe.connect_ex((HOST, 8080)) == 0:
            pytest.skip("port 8080 is taken on this machine")
    with agnhost("liveness"):
        assert get(8080, "/healthz")[::2] == (200, "ok")
        status, _h, body = get(8080, "/started")
        assert status == 200 and body.endswith("s") and body[0].isdigit()
        time.sleep(10.5)
        status, _h, body = get(8080, "/healthz")
        assert status == 500 and body.startswith("error: 1") and float(body.split(": ")[1]) > 10


def grpc_call(port: int, method: str, message: bytes) -> tuple[dict[str, str], bytes]:
    """One unary gRPC call over HTTP/2 (h2 as the client): the headers and trailers merged, and the body."""
    import h2.config
    import h2.connection
    import h2.events

    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    with socket.create_connection((HOST, port), timeout=10) as sock:
        conn.initiate_connection()
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, [(":method", "POST"), (":scheme", "http"), (":authority", f"{HOST}:{port}"),
                                   (":path", method), ("content-type", "application/grpc"), ("te", "trailers")])
        conn.send_data(stream, b"\x00" + len(message).to_bytes(4, "big") + message, end_stream=True)
        sock.sendall(conn.data_to_send())
        headers: dict[str, str] = {}
        body = bytearray()
        while True:
            data = sock.recv(65536)
            assert data, "connection closed before the answer ended"
            for event in conn.receive_data(data):
                if isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                    headers.update(dict(event.headers))
                elif isinstance(event, h2.events.DataReceived):
                    body.extend(event.data)
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    return headers, bytes(body)
            sock.sendall(conn.data_to_send())


def test_grpc_health_checking_serves_the_health_service_until_made_not_serving() -> None:
    port, http_port = free_port(), free_port()
    with agnhost("grpc-health-checking", f"--port={port}", f"--http-port={http_port}", "--service=svc"):
        get(http_port, "/nothing")  # listening
        check = "/grpc.health.v1.Health/Check"
        for _ in range(100):
            try:
                headers, body = grpc_call(port, check, b"\x0a\x03svc")
                break
            except ConnectionRefusedError:
                time.sleep(0.05)
        assert headers["grpc-status"] == "0" and headers["content-type"] == "application/grpc"
        assert body == b"\x00\x00\x00\x00\x02\x08\x01"  # SERVING
        headers, body = grpc_call(port, check, b"\x0a\x05other")
        assert (headers["grpc-status"], headers["grpc-message"], body) == ("5", "unknown service", b"")
        headers, _ = grpc_call(port, "/grpc.health.v1.Health/Watch", b"\x0a\x03svc")
        assert (headers["grpc-status"], headers["grpc-message"]) == ("12", "unimplemented")
        status, _, text = get(http_port, "/make-not-serving")
        assert status == 200 and text.endswith("s")
        assert grpc_call(port, check, b"\x0a\x03svc")[1] == b"\x00\x00\x00\x00\x02\x08\x02"  # NOT_SERVING
        get(http_port, "/make-serving")
        assert grpc_call(port, check, b"\x0a\x03svc")[1] == b"\x00\x00\x00\x00\x02\x08\x01"
