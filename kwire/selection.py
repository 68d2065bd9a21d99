"""The exchange filters as the user typed them: parsed, described, and turned into a kwire.query filter.

`Selection` holds the values of the filter options (`--api`, `--client-id`, `--topic`, `--host`,
`--partition`, `--since`, `--until`, `--errors`, `--min-latency`, `--group`, and inspect's `--changes`);
`selection.exchange_filter(paths)` makes the ExchangeFilter (with --group, kwire.group_filter's filter
beside it: members read from `paths` first, learnt as traffic comes without paths, or left to the
Spark job for `kwire spark`), `selection.describe()` says them back (`--api Fetch --since 10s`) for the
closing summary, the "matched nothing" warning and the HTML report.

Times (`--since`, `--until`), resolved to epoch nanoseconds here so the filter stays a plain predicate:
- a duration into the capture, from its first packet: `10s`, `1.5s`, `250ms`, `2m`, `1h`, `90` (seconds);
- a date and time, ISO 8601, UTC unless it says otherwise: `2026-11-20T10:00:05`, `2026-11-20 10:00:05.25Z`,
  `2026-11-20T11:00:05+01:00`;
- a time of day, UTC, on the day the capture starts: `10:00:05`, `10:00:05.123456` (as `inspect` prints);
- epoch seconds after `@`: `@1763632805.5` (as kwire prints times no calendar can hold).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import click

from kwire.capture.files import open_capture
from kwire.errors import CaptureError
from kwire.query import ExchangeFilter, parse_api, parse_host

NS = 1_000_000_000
_UNITS = {"ns": Decimal(1), "us": Decimal(1000), "µs": Decimal(1000), "ms": Decimal(10**6), "s": Decimal(NS),
          "m": Decimal(60 * NS), "min": Decimal(60 * NS), "h": Decimal(3600 * NS)}
_DURATION = re.compile(r"^\+?(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s|min|m|h)?$")
_TIME_OF_DAY = re.compile(r"^\d{1,2}:\d{2}(:\d{2}(\.\d{1,9})?)?$")


@dataclass(frozen=True)
class When:
    """A --since/--until value: `offset_ns` into the capture, or an absolute `epoch_ns`, or a time of
    day `day_ns` (nanoseconds after midnight UTC) on the capture's first day."""

    text: str
    offset_ns: int | None = None
    epoch_ns: int | None = None
    day_ns: int | None = None

    @property
    def needs_start(self) -> bool:
        return self.epoch_ns is None


MAX_ABS_NS = 2**63 - 1  # a time or duration must fit a signed 64-bit count of nanoseconds (as captures hold them)


def _decimal_ns(text: str, scale: Decimal) -> int:
    """Nanoseconds of a decimal number of `scale` units; ValueError when it is not finite or does not
    fit 64 bits (`@inf`, `@-Infinity`, `@nan`, `@1e999999`): a usage error, never an OverflowError."""
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"bad number {text!r}") from None
    if not number.is_finite() or number.adjusted() > 30 or abs(number * scale) > MAX_ABS_NS:
        raise ValueError(f"{text!r} is out of range (a time must fit 64-bit nanoseconds)")
    return int((number * scale).to_integral_value())


def parse_when(text: str) -> When:
    """A --since/--until value; ValueError with a readable message when it is none of the forms."""
    raw = text.strip()
    match = _DURATION.match(raw)
    if match:
        return When(text, offset_ns=_decimal_ns(match.group(1), _UNITS[match.group(2) or "s"]))
    if raw.startswith("@"):
        try:
            return When(text, epoch_ns=_decimal_ns(raw[1:], Decimal(NS)))
        except ValueError as exc:
            raise ValueError(f"bad epoch time {text!r}: {exc}") from None
    if _TIME_OF_DAY.match(raw):
        hours, minutes, *rest = raw.split(":")
        seconds = Decimal(rest[0]) if rest else Decimal(0)
        if int(hours) > 23 or int(minutes) > 59 or seconds >= 60:
            raise ValueError(f"bad time of day {text!r}")
        return When(text, day_ns=int(((int(hours) * 60 + int(minutes)) * 60 + seconds) * NS))
    try:
        moment = _dt.datetime.fromisoformat(raw.replace("z", "Z"))
    except ValueError:
        raise ValueError(f"{text!r} is not a duration (10s, 250ms), a time (10:00:05), a date and time "
                         "(2026-11-20T10:00:05) or epoch seconds (@1763632805)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    delta = moment - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    return When(text, epoch_ns=(delta.days * 86400 + delta.seconds) * NS + delta.microseconds * 1000)


def resolve(when: When, start_ns: int | None) -> int:
    """Epoch nanoseconds of `when`, given the capture's first packet time (None: not known)."""
    if when.epoch_ns is not None:
        return when.epoch_ns
    if start_ns is None:
        raise click.BadParameter(f"{when.text!r} is relative to the capture's start, which is not known here; "
                                 "give a date and time")
    if when.offset_ns is not None:
        return start_ns + when.offset_ns
    midnight = start_ns - start_ns % (86400 * NS)
    return midnight + when.day_ns


def capture_start(paths) -> int | None:
    """The earliest first-packet time of the capture files (None when none has a packet). Files that
    cannot be read are left to the run, which reports them."""
    first = None
    for path in paths:
        try:
            with open_capture(path) as reader:
                packet = next(iter(reader), None)
        except (CaptureError, OSError):
            continue
        if packet is not None and (first is None or packet.ts_ns < first):
            first = packet.ts_ns
    return first


@dataclass
class Selection:
    """The filter options' values as given (tuples for the repeatable ones)."""

    apis: tuple = ()
    client_ids: tuple = ()
    topics: tuple = ()
    hosts: tuple = ()
    partitions: tuple = ()
    since: When | None = None
    until: When | None = None
    errors_only: bool = False
    min_latency: float | None = None
    group: str | None = None
    group_members_later: bool = False  # kwire spark: a Spark job reads the group's members
    changes_only: bool = False  # kwire inspect --changes: only the exchanges that change the cluster
    _start: list = field(default_factory=list, repr=False)  # the capture start, once looked up

    @property
    def active(self) -> bool:
        return bool(self.apis or self.client_ids or self.topics or self.hosts or self.partitions or self.since
                    or self.until or self.errors_only or self.min_latency is not None or self.group
                    or self.changes_only)

    def _api_keys(self) -> frozenset[int]:
        keys = set()
        for api in self.apis:
            for part in api.split(","):
                try:
                    keys.add(parse_api(part.strip()))
                except ValueError as exc:
                    raise click.BadParameter(str(exc), param_hint="--api") from None
        return frozenset(keys)

    def _hosts(self) -> tuple:
        specs = []
        for host in self.hosts:
            for part in host.split(","):
                try:
                    specs.append(parse_host(part))
                except ValueError as exc:
                    raise click.BadParameter(str(exc), param_hint="--host") from None
        return tuple(specs)

    def _time(self, when: When | None, paths) -> int | None:
        if when is None:
            return None
        if when.needs_start and not self._start:
            self._start.append(capture_start(paths) if paths else None)
        return resolve(when, self._start[0] if self._start else None)

    @property
    def needs_prepass(self) -> bool:
        """Does the filter read the captures before the run (--group's members, a relative time's start)?"""
        return bool(self.group and not self.group_members_later) or any(
            when is not None and when.needs_start for when in (self.since, self.until))

    def exchange_filter(self, paths=()):
        """The ExchangeFilter; relative times are resolved against the first packet of `paths`. With
        --group, an AllOf of it and the group's filter (kwire.group_filter)."""
        keep = ExchangeFilter(api_keys=self._api_keys(), client_ids=frozenset(self.client_ids),
                              topics=frozenset(self.topics), errors_only=self.errors_only,
                              min_latency_ms=self.min_latency, hosts=self._hosts(),
                              partitions=frozenset(self.partitions), since_ns=self._time(self.since, paths),
                              until_ns=self._time(self.until, paths))
        from kwire.group_filter import AllOf, GroupFilter, group_members

        if self.changes_only:
            from kwire.analytics.changes_read import is_change

            keep = AllOf(keep, is_change)
        if not self.group:
            return keep

        if self.group_members_later:
            group = GroupFilter(self.group, resolved=False)
        elif paths:
            group = group_members(list(paths), self.group)
        else:
            group = GroupFilter(self.group, learn=True)
        return AllOf(keep, group)

    def describe(self) -> str:
        """The filters as options, in a fixed order: "--api Fetch --topic orders --since 10s"."""
        words: list[str] = []
        for option, values in (("--api", self.apis), ("--client-id", self.client_ids), ("--topic", self.topics),
                               ("--host", self.hosts), ("--partition", self.partitions)):
            words += [f"{option} {_quote(str(v))}" for v in values]
        if self.group:
            words.append(f"--group {_quote(self.group)}")
        for option, when in (("--since", self.since), ("--until", self.until)):
            if when is not None:
                words.append(f"{option} {_quote(when.text)}")
        if self.errors_only:
            words.append("--errors")
        if self.min_latency is not None:
            words.append(f"--min-latency {self.min_latency:g}")
        if self.changes_only:
            words.append("--changes")
        return " ".join(words)


def _quote(text: str) -> str:
    if text and all(ch.isalnum() or ch in "-_.,:/@[]+" for ch in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"
