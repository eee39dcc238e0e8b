"""Sockets made inside a network namespace by the calling thread: they live in the namespace, and the thread is
back in its own namespace afterwards (a socket made next belongs to the host)."""

from __future__ import annotations

import os
import socket

import pytest

ADDRESS = "10.254.0.7"  # exists only inside the namespace made here


@pytest.fixture(scope="module")
def holder():
    from mini_kube.network.namespaces import Holder, can_make_namespaces, run_in

    possible, why = can_make_namespaces()
    if not possible:
        pytest.skip(f"network namespaces cannot be made here: {why}")
    made = Holder()
    made.wait_ready()
    run_in(made.netns, f"link set lo up\naddress add {ADDRESS}/32 dev lo\n")
    yield made
    made.close()


def test_sockets_are_made_in_the_namespace_and_the_thread_comes_back(holder) -> None:
    from mini_kube.network.namespaces import sockets_in

    home = os.readlink("/proc/thread-self/ns/net")
    made = sockets_in(holder.netns, socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK, 3)
    try:
        assert os.readlink("/proc/thread-self/ns/net") == home
        for sock in made:
            assert sock.gettimeout() == 0.0
            sock.bind((ADDRESS, 0))  # only possible inside the namespace
        with socket.socket() as host, pytest.raises(OSError) as raised:
            host.bind((ADDRESS, 0))
        assert raised.value.errno == 99  # EADDRNOTAVAIL: the host has no such address
    finally:
        for sock in made:
            sock.close()


def test_a_namespace_that_cannot_be_entered_leaves_the_thread_at_home(tmp_path) -> None:
    from mini_kube.network.namespaces import sockets_in

    home = os.readlink("/proc/thread-self/ns/net")
    not_a_namespace = tmp_path / "net"
    not_a_namespace.write_text("")
    with pytest.raises(OSError):
        sockets_in(str(not_a_namespace), socket.AF_INET, socket.SOCK_STREAM, 1)
    assert os.readlink("/proc/thread-self/ns/net") == home
