"""Capture times as text, for every renderer: one formatter that cannot fail.

A capture's timestamps are whatever its file says: a pcapng interface with `if_tsresol` 0 or one
flipped byte puts packets past the year 9999, where `datetime.fromtimestamp` raises. Every view
formats times here. A time that a calendar date cannot hold (before year 1, after 9999, not finite)
is shown as epoch seconds, `@9223372036.854775807`, never an exception.

- `in_seconds(ts_ns)`: an instant of the stats document (epoch ns, named `*ts_ns`) as the epoch seconds these take.
- `utc_datetime(seconds)`: the aware UTC datetime, or None when out of range.
- `utc_text(seconds, fmt)`: strftime of it, or the epoch form.
- `clock_ns(ts_ns)`: `HH:MM:SS.ffffff` (UTC) of a capture time in nanoseconds.
- `local_clock(ts_ns)`: `HH:MM:SS` in the local time zone (the live dashboard's clock).
- `ms_date(ms)`: a record timestamp (milliseconds since the epoch) as `2026-11-22 00:01:29.629`.
"""

from __future__ import annotations

import datetime as _dt
import math

UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=UTC)
# First and last second a datetime can hold (0001-01-01 and 9999-12-31 23:59:59), with a day of
# margin so that no time zone shift takes a value out of range.
MIN_SECONDS = -62135596800 + 86400
MAX_SECONDS = 253402300799 - 86400


def _in_range(seconds) -> bool:
    try:
        return MIN_SECONDS <= seconds <= MAX_SECONDS and not (type(seconds) is float and math.isnan(seconds))
    except TypeError:
        return False


def epoch_text(seconds) -> str:
    """The epoch form of a time no calendar holds: "@<seconds>"."""
    if type(seconds) is int:
        return f"@{seconds}"
    try:
        return f"@{seconds:.6f}"
    except (TypeError, ValueError):
        return f"@{seconds}"


def epoch_ns_text(ts_ns: int) -> str:
    sign = "-" if ts_ns < 0 else ""
    whole, frac = divmod(abs(ts_ns), 1_000_000_000)
    return f"@{sign}{whole}.{frac:09d}"


def in_seconds(ts_ns: int | None) -> float | None:
    """Epoch ns as epoch seconds (None stays None)."""
    return None if ts_ns is None else ts_ns / 1e9


def utc_datetime(seconds) -> _dt.datetime | None:
    """Epoch seconds (int or float) as an aware UTC datetime; None when no datetime can hold it."""
    if not _in_range(seconds):
        return None
    return _EPOCH + _dt.timedelta(seconds=seconds)


def utc_text(seconds, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    dt = utc_datetime(seconds)
    return epoch_text(seconds) if dt is None else dt.strftime(fmt)


def clock_ns(ts_ns: int) -> str:
    """Time of day, UTC, to the microsecond: "10:00:05.123456"."""
    if not MIN_SECONDS * 1_000_000_000 <= ts_ns <= MAX_SECONDS * 1_000_000_000:
        return epoch_ns_text(ts_ns)
    dt = _EPOCH + _dt.timedelta(microseconds=ts_ns // 1000)
    return f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}.{dt.microsecond:06d}"


def date_ns(ts_ns: int) -> str:
    """The UTC date of a capture time, "2026-11-22", or its epoch form."""
    if not MIN_SECONDS * 1_000_000_000 <= ts_ns <= MAX_SECONDS * 1_000_000_000:
        return epoch_ns_text(ts_ns)
    return (_EPOCH + _dt.timedelta(microseconds=ts_ns // 1000)).strftime("%Y-%m-%d")


def local_clock(ts_ns: int) -> str:
    """Time of day in the local time zone, "10:00:05", or the epoch form."""
    seconds = ts_ns // 1_000_000_000
    if not _in_range(seconds):
        return epoch_ns_text(ts_ns)
    try:
        return _dt.datetime.fromtimestamp(seconds).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):  # a platform whose time_t is narrower
        return utc_text(seconds, "%H:%M:%S")


def ms_date(ms) -> str | None:
    """A record timestamp (ms since the epoch) as "2026-11-22 00:01:29.629" (UTC); None for the
    "no timestamp" value -1 and for anything that is not a plausible time."""
    if type(ms) is not int or ms < 0:
        return None
    dt = utc_datetime(ms // 1000)
    if dt is None:
        return None
    return dt.strftime("%Y-%m-%d %H:%M:%S") + f".{ms % 1000:03d}"
