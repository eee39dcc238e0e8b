"""The in-process components' requests take turns on a few seats (apiserver/http/fairness.py); other clients never
wait for them (issue #28: with thousands of Pods starting, `kubectl get nodes` waited behind hundreds of the
components' requests at each of its steps). Here every seat is held: a component's request waits in line until one
is given back, while real kubectl is answered at once; a component's watch takes no seat."""

from __future__ import annotations

import asyncio

import pytest
from mini_kube.apiserver.http import fairness
from mini_kube.machinery.refs import NAMESPACES

from mini_kube.cli import client_for
from mini_kube.testing import MiniKube
from tests.helpers import kubectl


@pytest.fixture(scope="module")
def kube():
    with MiniKube(controllers=False, scheduler=False, insecure_http=False) as kube:
        kube.server.parts.handler.seats.seats = 16  # off by default (fairness.COMPONENT_SEATS): turned on here
        yield kube


def test_components_wait_for_a_seat_while_other_clients_are_served(kube):
    seats = kube.server.parts.handler.seats

    async def hold_every_seat() -> list:
        held = []
        for _ in range(seats.seats):
            held.append(await seats.enter(True, _get(), {}))
        return held

    seats.max_wait = 60.0  # in line for the whole test
    held = kube.run(hold_every_seat())
    assert all(leave is not None for leave in held)
    client = kube.run(_client(kube))
    waiting = asyncio.run_coroutine_threadsafe(client.get(NAMESPACES, "default"), kube.loop)
    try:
        watching = asyncio.run_coroutine_threadsafe(_first_watch_event(client), kube.loop)
        assert watching.result(30)["object"]["metadata"]["name"]  # a watch takes no seat
        out = kubectl(kube, "get", "namespace", "default", "-o", "name").stdout  # not in line
        assert out.strip() == "namespace/default"
        assert not waiting.done()  # still in line
        assert len(seats.waiting) == 1
    finally:
        kube.run(_give_back(held))
        seats.max_wait = fairness.MAX_WAIT
    assert waiting.result(30)["metadata"]["name"] == "default"
    kube.run(client.close())
    assert seats.taken == 0 and not seats.waiting


def _get():
    from mini_kube.apiserver.requestinfo import parse_request_info

    return parse_request_info("GET", "/api/v1/namespaces/default", {})


async def _give_back(held: list) -> None:
    for leave in held:
        leave()


async def _client(kube):
    return client_for(kube.server)


async def _first_watch_event(client) -> dict:
    events = client.watch(NAMESPACES, timeout_seconds=5)
    try:
        return await anext(events)
    finally:
        await events.aclose()


def test_a_component_waits_in_line_at_most_max_wait_then_is_served_without_a_seat(kube):
    """Seats held for long wait on something else than the loop (a webhook's timeout): the components behind them
    are served after `max_wait` rather than stalled for as long as the seats are held."""
    seats = kube.server.parts.handler.seats

    async def hold_every_seat() -> list:
        return [await seats.enter(True, _get(), {}) for _ in range(seats.seats)]

    seats.max_wait = 0.5
    held = kube.run(hold_every_seat())
    overflowed = seats.overflowed
    client = kube.run(_client(kube))
    try:
        got = asyncio.run_coroutine_threadsafe(client.get(NAMESPACES, "default"), kube.loop).result(10)
        assert got["metadata"]["name"] == "default"
        assert seats.overflowed == overflowed + 1 and not seats.waiting
        assert seats.taken == seats.seats  # the held seats are still held: the request took none
    finally:
        kube.run(_give_back(held))
        seats.max_wait = fairness.MAX_WAIT
    assert seats.taken == 0
