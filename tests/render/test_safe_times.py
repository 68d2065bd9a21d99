"""The two helpers every view uses: wire strings made safe for a terminal, times that cannot fail."""

from __future__ import annotations

import datetime as dt
import io
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from kwire.render.safe import term_safe, wire_text
from kwire.render.times import clock_ns, date_ns, local_clock, ms_date, utc_datetime, utc_text


def test_printable_text_is_unchanged():
    for text in ("orders", "topic.with-dots_and:colons", "grüße", "訂單", "[bold]not markup[/]", "a b", "\\x1b"):
        assert term_safe(text) == text


@pytest.mark.parametrize("raw, shown", [
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\x9b31m", "\\x9b31m"),
    ("a\nb\tc\r", "a\\x0ab\\x09c\\x0d"),
    ("\x00\x7f", "\\x00\\x7f"),
    ("\u202eevil", "\\u202eevil"),
    ("\u2028", "\\u2028"),
    ("\U000e0041", "\\U000e0041"),
])
def test_controls_are_shown_escaped(raw, shown):
    assert term_safe(raw) == shown


def test_none_and_numbers():
    assert term_safe(None) == "null"
    assert term_safe(42) == "42"


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_nothing_unprintable_survives(text):
    safe = term_safe(text)
    assert safe.isprintable()
    assert all(unicodedata.category(ch)[0] != "C" for ch in safe)


def test_wire_text_is_never_markup():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor", width=200)
    console.print(wire_text("[bold red]x[/] [link=http://e]y[/link] \x1b[2J"))
    text = out.getvalue()
    assert "[bold red]x[/] [link=http://e]y[/link]" in text
    assert "\x1b]8;" not in text  # no hyperlink escape made from the markup
    assert "\x1b[2J" not in text


ABSURD_NS = [0, 1, -1, -10**18, 2**63 - 1, -(2**63), 253402300800 * 10**9, 10**30, -(10**30)]


@pytest.mark.parametrize("ts_ns", ABSURD_NS)
def test_clock_and_date_never_fail(ts_ns):
    text = clock_ns(ts_ns)
    assert isinstance(text, str) and text
    assert date_ns(ts_ns)
    assert local_clock(ts_ns)


@pytest.mark.parametrize("seconds", [0, 0.5, -1, -62135596800 - 1, 253402300800, 1e300, float("inf"), float("-inf"),
                                     float("nan"), 2**63, 9223372036.854775807])
def test_utc_text_never_fails(seconds):
    assert utc_text(seconds)


def test_times_in_range_are_dates():
    assert clock_ns(1_795_305_689_394_658_123) == "00:01:29.394658"
    assert date_ns(1_795_305_689_394_658_123) == "2026-11-22"
    assert utc_text(1_795_305_689.5, "%Y-%m-%d %H:%M:%S.%f") == "2026-11-22 00:01:29.500000"
    assert clock_ns(-1) == "23:59:59.999999"  # 1969-12-31, a date like any other
    assert utc_datetime(0) == dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def test_out_of_range_times_are_epoch_seconds():
    assert clock_ns(2**63 - 1) == "23:47:16.854775"  # 2262-04-11: still a date
    assert clock_ns(10**30) == "@1000000000000000000000.000000000"
    assert clock_ns(-(10**30)) == "@-1000000000000000000000.000000000"
    assert utc_text(253402300800) == "@253402300800"
    assert utc_text(float("inf")) == "@inf"
    assert utc_datetime(float("nan")) is None


def test_record_timestamps():
    assert ms_date(1_795_305_689_629) == "2026-11-22 00:01:29.629"
    assert ms_date(-1) is None  # Kafka's "no timestamp"
    assert ms_date(2**63 - 1) is None
    assert ms_date("1") is None
