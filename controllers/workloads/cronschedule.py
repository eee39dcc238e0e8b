"""CronJob schedules as the CronJob controller reads them (robfig/cron's standard parser upstream): five
fields (evaluated by `cronsim`), the `@hourly`-style macros, `@every <duration>`, in a time zone."""

from __future__ import annotations

import datetime as dt
import zoneinfo

from cronsim import CronSim, CronSimError
from mini_kube.machinery.duration import DurationError, parse_go_duration

MACROS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}


class ScheduleError(ValueError):
    pass


def go_duration(text: str) -> float:
    """Seconds in a Go duration ("1h30m", "90s")."""
    try:
        return parse_go_duration(text) / 1e9
    except DurationError as exc:
        raise ScheduleError(str(exc)) from None


def zone(name: str | None) -> dt.tzinfo:
    """The CronJob's `timeZone` (UTC when unset; raises for an unknown one)."""
    if not name:
        return dt.UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown time zone {name}") from exc


class Schedule:
    """One parsed schedule in one time zone."""

    def __init__(self, spec: str, tz: dt.tzinfo = dt.UTC) -> None:
        self.tz = tz
        self.every: float | None = None
        text = spec.strip()
        if text.startswith("@every "):
            self.every = max(round(go_duration(text[len("@every "):].strip())), 1)
            self.expr = ""
            return
        self.expr = MACROS.get(text, text).replace("?", "*")  # robfig/cron reads `?` as `*` in every field
        if self.expr.startswith("@"):
            raise ScheduleError(f"unrecognized descriptor: {text}")
        try:
            CronSim(self.expr, dt.datetime.now(tz))
        except (CronSimError, ValueError) as exc:
            raise ScheduleError(str(exc) or "invalid schedule") from exc

    def next_after(self, when: dt.datetime) -> dt.datetime:
        """The first activation strictly after `when`."""
        if self.every is not None:
            return when.replace(microsecond=0) + dt.timedelta(seconds=self.every)
        local = when.astimezone(self.tz).replace(microsecond=0)
        return next(CronSim(self.expr, local)).astimezone(dt.UTC)

    def latest_until(self, now: dt.datetime) -> dt.datetime:
        """The last activation at or before `now` (cron expressions only)."""
        local = now.astimezone(self.tz).replace(microsecond=0) + dt.timedelta(seconds=1)
        return next(CronSim(self.expr, local, reverse=True)).astimezone(dt.UTC)

    def most_recent(self, earliest: dt.datetime, now: dt.datetime) -> tuple[dt.datetime | None, int]:
        """The latest activation in (earliest, now] and roughly how many there were (as upstream counts)."""
        first = self.next_after(earliest)
        if first > now:
            return None, 0
        second = self.next_after(first)
        if second > now:
            return first, 0
        gap = round((second - first).total_seconds())
        if gap < 1:
            raise ScheduleError("time difference between two schedules is less than 1 second")
        missed = int((now - first).total_seconds()) // gap + 1
        if self.every is not None:
            return first + dt.timedelta(seconds=(missed - 1) * gap), missed
        return self.latest_until(now), missed
