"""Go's time.Duration text, one implementation (machinery.duration) for the protobuf codec, the CronJob `@every`
schedule, CRD `duration` formats, kubelet events and the Python agnhost."""

from __future__ import annotations

import pytest
from mini_kube.controllers.workloads.cronschedule import ScheduleError, go_duration
from mini_kube.machinery.duration import DurationError, format_go_duration, parse_go_duration


@pytest.mark.parametrize(("text", "ns"), [
    ("0", 0), ("-0", 0), ("+3s", 3 * 10**9), (".5s", 5 * 10**8), ("1.s", 10**9), ("1µs", 1000), ("1μs", 1000),
    ("1h2m3.5s", 3723 * 10**9 + 5 * 10**8), ("-1.5ms", -1_500_000), ("9223372036854775807ns", (1 << 63) - 1)])
def test_parse_as_go(text, ns):
    assert parse_go_duration(text) == ns


@pytest.mark.parametrize("text", ["", "1", "s", ".s", "-", "1x", "1s2", "9223372036854775808ns"])
def test_refusals_carry_gos_message(text):
    with pytest.raises(DurationError, match=f'^time: invalid duration "{text}"$'):
        parse_go_duration(text)


def test_format_as_go():
    assert [format_go_duration(ns) for ns in (0, 999, 1500, 2_000_000, 61 * 10**9, 3_601_000_000_000)] == [
        "0s", "999ns", "1.5µs", "2ms", "1m1s", "1h0m1s"]


def test_cron_every_reads_go_durations():
    assert go_duration("1h30m") == 5400.0
    with pytest.raises(ScheduleError, match='time: invalid duration "5 minutes"'):
        go_duration("5 minutes")
