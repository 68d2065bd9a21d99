"""The problem recordings (captures/problems, scripts/record_problems.py) and their ground truth.

What it owns: reading a recording's truth, the clients' own view, into the facts tests compare
kwire's groups and findings with, and computing kwire's stats document of a recording once.
Expected values come only from the truth files, never from kwire:

- CAPTURE.truth.jsonl: callbacks of every client and the scenario's own actions, with wall-clock
  times ("assigned" / "revoked" with partitions and member id, "killed", "delivered" with the share
  delivery count, "ack_result", "mock_set_rtt", "proxy_throttled", "committed", ...);
- CAPTURE.truth.log.gz: every client's librdkafka debug log (tests/truthlog.py parses its protocol
  lines; a few other lines are read here: acquired producer ids, parse failures, request timeouts).

`KWIRE_PROBLEMS_DIR` points the tests at another set of recordings made by the same script (the
recordings no test has seen).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from functools import cache
from pathlib import Path

from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files

DIR = Path(os.environ.get("KWIRE_PROBLEMS_DIR") or Path(__file__).resolve().parents[1] / "captures" / "problems")
CLEAN = ("clean-classic", "clean-kip848", "clean-share", "txn-clean")
# the other recordings of consumer groups: their scenarios keep no JoinGroup from the broker (no `proxy_held`)
PROBLEMS_WITH_GROUPS = ("clean-classic", "member-expired", "rebalance-storm", "join-stuck", "unanswered",
                        "error-burst", "slow-broker")


def capture(name: str) -> Path:
    return DIR / f"{name}.pcap.gz"


@cache
def events(name: str) -> tuple[dict, ...]:
    with open(DIR / f"{name}.pcap.truth.jsonl") as f:
        return tuple(json.loads(line) for line in f if line.strip())


@cache
def log(name: str) -> str:
    with gzip.open(DIR / f"{name}.pcap.truth.log.gz", "rt") as f:
        return f.read()


@cache
def document(name: str) -> dict:
    agg = Aggregator()
    for ex in analyze_files([str(capture(name))]):
        agg.add_exchange(ex)
    return agg.document()


def findings(name: str, kind: str) -> list[dict]:
    return [f for f in document(name)["findings"] if f["kind"] == kind]


def of(name: str, event: str, who: str | None = None) -> list[dict]:
    return [e for e in events(name) if e["event"] == event and (who is None or e["who"] == who)]


def first(name: str, event: str, who: str | None = None) -> dict:
    found = of(name, event, who)
    assert found, f"{name}: no {event} event" + (f" of {who}" if who else "")
    return found[0]


def partitions(event: dict) -> set[tuple[str, int]]:
    return {(topic, p) for topic, p in event["partitions"] or ()}


def acquired_pid(name: str, client: str) -> int:
    """The producer id librdkafka says it acquired (debug=eos)."""
    match = re.search(rf"\|{re.escape(client)}#[^|]*\|.*Acquired PID\{{Id:(\d+),", log(name))
    assert match, f"{name}: {client} logged no acquired producer id"
    return int(match.group(1))


def log_lines_matching(name: str, pattern: str) -> list[str]:
    """The truth log's lines matching `pattern`, whoever wrote them (kafka-python's lines name no client)."""
    return [line for line in log(name).splitlines() if re.search(pattern, line)]


def log_lines(name: str, client: str, pattern: str) -> list[tuple[float, str]]:
    """(time, line) of the client's log lines matching `pattern`."""
    out = []
    for line in log(name).splitlines():
        m = re.match(r"^%\d\|(\d+\.\d+)\|[^|]*\|([^|#]*)#", line)
        if m and m.group(2) == client and re.search(pattern, line):
            out.append((float(m.group(1)), line))
    return out


def _written_at(found: tuple) -> dict[tuple, float]:
    """(partition, offset) -> the time of the produce()/send() call that wrote it, from the producers' `sent`
    (each call, in order; with `n` where the client numbers them) and their `delivered` / `acked` callbacks
    (the record's offset; matched by `n`, else in order). A share consumer's `delivered` (with its delivery
    count) is a delivery, not a write."""
    sent: dict[str, list] = {}
    written: dict[str, list] = {}
    for e in found:
        if e["event"] == "sent":
            sent.setdefault(e["who"], []).append(e)
        elif e["event"] in ("delivered", "acked") and "delivery_count" not in e and "offset" in e:
            written.setdefault(e["who"], []).append(e)
    out: dict[tuple, float] = {}
    for who, acks in written.items():
        calls = sent.get(who, [])
        by_n = {e["n"]: e["ts"] for e in calls if "n" in e}
        for i, ack in enumerate(acks):
            at = by_n.get(ack["n"]) if "n" in ack else (calls[i]["ts"] if i < len(calls) else None)
            if at is not None and ack.get("error") is None and ack["offset"] >= 0:
                out.setdefault((ack.get("partition", 0), ack["offset"]), at)
    return out


def client_latencies(name: str) -> dict[str, dict[tuple, float]]:
    """consumer client -> {(partition, offset): the time its poll first returned the record minus the time
    of the produce() call that wrote it}, seconds, from the truth alone: readers' `consumed`, share
    consumers' `delivered` (the first, delivery count 1)."""
    found = events(name)
    written = _written_at(found)
    out: dict[str, dict[tuple, float]] = {}
    for e in found:
        got = e["event"] == "consumed" or (e["event"] == "delivered" and e.get("delivery_count") == 1)
        key = (e.get("partition", 0), e.get("offset"))
        if got and key in written:
            out.setdefault(e["who"], {}).setdefault(key, e["ts"] - written[key])
    return out
