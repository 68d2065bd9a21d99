"""kwire.time_order: exchanges in request time order, through a bounded window, whatever the job count or
the input's way in; and the pipeline's `settled` contract it relies on, on every committed capture."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kwire.cli.main import cli
from kwire.pipeline import RunSummary, analyze_files
from kwire.time_order import TimeOrder, exchange_times

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
ALL = sorted(str(p) for p in CAPTURES.rglob("*") if p.name.endswith((".pcap", ".pcapng", ".pcap.gz")))
MS = 1_000_000


def run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


# --- the contract: Pipeline.settled --------------------------------------------------------------------------

@pytest.mark.parametrize("path", ALL, ids=lambda p: Path(p).name)
def test_nothing_comes_older_than_settled(path):
    """After each window the pipeline hands over, no exchange still to come (answered) was requested before what
    settled() said: the clients' requests are on the wire before their answers, and kwire holds none back."""
    pipelines: list = []
    floor = None
    seen = 0
    for window in analyze_files([path], summary=RunSummary(), on_pipeline=pipelines.append, windows=True):
        for ex in window:
            seen += 1
            if floor is not None and ex.given_up_ts_ns is None:
                assert exchange_times(ex)[0] >= floor, (path, ex)
        settled, cost = pipelines[0].settled(0)
        assert cost >= 0
        floor = settled if floor is None else max(floor, settled)
    assert seen


# --- the order -----------------------------------------------------------------------------------------------

def _items(seed: int, n: int = 3000):
    """(at, done, unanswered) of `n` exchanges, in completion order: requests every 0-2 ms, answered after 0-50 ms,
    a few long polls of 500 ms and a few unanswered, given up 20 s later."""
    rnd = random.Random(seed)
    at = 0
    items = []
    for _ in range(n):
        at += rnd.randrange(0, 2 * MS)
        roll = rnd.random()
        if roll < 0.01:
            items.append((at, at + 20_000 * MS, True))
        elif roll < 0.05:
            items.append((at, at + 500 * MS, False))
        else:
            items.append((at, at + rnd.randrange(0, 50 * MS), False))
    items.sort(key=lambda item: item[1])
    return items


def _through(order: TimeOrder, items, settle_every: int = 0) -> list:
    out = []
    for i, (at, done, unanswered) in enumerate(items):
        out.extend(order.add(at, done, 100, unanswered, (at, i)))
        if settle_every and i % settle_every == 0:
            out.extend(order.settle())
    out.extend(order.finish())
    return out


@pytest.mark.parametrize("seed", range(5))
def test_within_the_window_the_order_is_exact(seed):
    items = [item for item in _items(seed) if not item[2]]
    order = TimeOrder(window_ns=1000 * MS)
    out = _through(order, items)
    assert [at for at, _ in out] == sorted(at for at, _, _ in items)
    assert sorted(out) == out  # equal times in completion order
    assert order.note() is None


@pytest.mark.parametrize("seed", range(3))
def test_late_ones_go_on_at_once_and_are_counted_by_why(seed):
    items = _items(seed)
    order = TimeOrder(window_ns=100 * MS)
    out = _through(order, items)
    assert sorted(out, key=lambda x: x[1]) == sorted(((at, i) for i, (at, _, _) in enumerate(items)),
                                                       key=lambda x: x[1])  # nothing lost, nothing twice
    inversions = sum(1 for a, b in zip(out, out[1:]) if b[0] < a[0])
    unanswered = sum(1 for item in items if item[2])
    long_polls = sum(1 for at, done, u in items if not u and done - at > 100 * MS)
    assert order.late_unanswered == unanswered
    assert 0 < order.late <= long_polls
    assert inversions <= order.late + order.late_unanswered
    note = order.note()
    assert f"{order.late:,} answered more than 0.1 s after their request" in note
    assert f"{unanswered:,} unanswered" in note


def test_the_bound_lets_the_oldest_go_early_and_says_so():
    items = [(i * MS, i * MS + 50 * MS, False) for i in range(5000)]  # all answered 50 ms late
    items += [(10 * MS, 5100 * MS, False)]  # and one far behind
    order = TimeOrder(window_ns=10_000 * MS, max_held=100)
    out = _through(order, items)
    assert len(out) == len(items)
    assert len(order.times) == 0 and order.held_bytes == 0
    assert order.early > 0
    assert order.late_bound == 1
    assert "holds at most 100 exchanges" in order.note()


def test_the_bytes_bound():
    order = TimeOrder(window_ns=10_000 * MS, max_bytes=10_000)
    ready = []
    for i in range(100):
        ready.extend(order.add(i, i, 1000, False, i))
        assert order.held_bytes <= 10_000
    assert ready == list(range(len(ready))) and len(ready) >= 90


def test_settled_lets_the_settled_go_before_the_window():
    order = TimeOrder(window_ns=10_000 * MS)
    order.watch(lambda clock: (5 * MS, 1))
    for i in range(10):
        assert order.add(i * MS, i * MS + MS, 1, False, i) == ()
    assert order.settle() == [0, 1, 2, 3, 4, 5]  # requested at or before 5 ms
    order.watch(lambda clock: (clock, 1))
    assert order.settle() == [6, 7, 8, 9]
    assert order.add(3 * MS, 20 * MS, 1, False, "late") == ["late"]
    assert order.late_wire == 1 and "out of order on the wire" in order.note()


def test_settled_is_asked_less_often_where_it_looks_at_many():
    asked = []
    order = TimeOrder()
    order.watch(lambda clock: (asked.append(clock) or 0, 64 * 1000))  # 1,000 exchanges between two questions
    for i in range(5000):
        order.add(i, i, 1, False, i)
        order.settle()
    assert 4 <= len(asked) <= 6


# --- inspect -------------------------------------------------------------------------------------------------

def _json(*args: str) -> list[dict]:
    return [json.loads(line) for line in run("inspect", "--json", "--no-summary", *args).stdout.splitlines()]


@pytest.mark.parametrize("path", ALL, ids=lambda p: Path(p).name)
def test_inspect_writes_every_capture_in_time_order(path):
    """In time order, but for requests kwire gave up on only when their connection closed or the capture ended
    (it cannot know they go unanswered before): those come late, and the note counts them."""
    result = run("inspect", "--json", "--no-summary", "-j", "0", path)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    placed, latest, late = [], -1, 0
    for line in lines:
        if line["ts_ns"] < latest:
            assert line["status"] == "no_response", line
            late += 1
        else:
            placed.append(line["ts_ns"])
            latest = line["ts_ns"]
    assert placed == sorted(placed)
    assert (f"{late:,} unanswered, given up" in result.stderr) if late else "out of time order" not in result.stderr
    completed = _json("-j", "0", "--sort", "completion", path)
    assert sorted(map(json.dumps, lines)) == sorted(map(json.dumps, completed))


@pytest.mark.parametrize("name", ["problems/proxy-faults.pcap.gz", "problems/rebalance-storm.pcap.gz"])
def test_one_order_whatever_the_jobs_or_the_way_in(name):
    path = str(CAPTURES / name)
    one = run("inspect", "--json", "--no-summary", "-j", "0", "--window", "0.3", path)
    two = run("inspect", "--json", "--no-summary", "-j", "2", "--window", "0.3", path)
    piped = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", "--no-summary", "--window", "0.3", "-"],
                           input=Path(path).read_bytes(), capture_output=True, check=True)
    assert one.stdout_bytes == two.stdout_bytes == piped.stdout
    assert "out of time order" in one.stderr and one.stderr == two.stderr == piped.stderr.decode()


def test_a_short_window_says_what_came_late():
    result = run("inspect", "--window", "0.1", str(CAPTURES / "problems/unanswered.pcap.gz"))
    note = [line for line in result.stderr.splitlines() if "out of time order" in line]
    assert len(note) == 1
    assert "answered more than 0.1 s after their request (--window widens" in note[0]


@pytest.mark.parametrize("window", ["nan", "inf", "1e300", "0", "-1"])
def test_a_window_that_is_not_a_duration_is_one_line(window):
    result = CliRunner().invoke(cli, ["inspect", "--window", window, str(CAPTURES / "kcat-snappy.pcap")])
    assert result.exit_code == 2  # a usage error, no traceback
    assert "Invalid value for '--window'" in result.output, result.output


def test_the_widest_window_is_held_in_64_bits():
    result = run("inspect", "--window", "1e9", str(CAPTURES / "kcat-snappy.pcap"))
    assert result.stdout.count("\n") > 10


def test_the_line_view_and_count_follow_the_time_order():
    path = str(CAPTURES / "problems/rebalance-storm.pcap.gz")
    lines = run("inspect", "--no-summary", path).stdout.splitlines()
    clocks = [line.split()[0] for line in lines]
    assert clocks == sorted(clocks) and len(clocks) > 500  # one day: HH:MM:SS.ffffff sorts as text
    completion = [line.split()[0] for line in run("inspect", "--no-summary", "--sort", "completion", path)
                  .stdout.splitlines()]
    assert completion != clocks and sorted(completion) == clocks
    first = run("inspect", "--no-summary", "-c", "40", path).stdout.splitlines()
    assert first == lines[:40]
