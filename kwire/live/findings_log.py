"""The findings log: each finding as one event when it is first known and again when it ends.

`FindingsTracker.update(findings, now_ns, ended)` compares the findings `kwire stats` would list
now (kwire.analytics.findings documents) with what it saw before and returns the events to log,
each the finding's document with five keys in front (seven at most; kwire.vocabulary.FINDINGS_LOG declares them):

    {"event": "start" | "end", "id": ..., "at_ts_ns": capture time (epoch ns), "at": the same in epoch s
     (deprecated, for one release), "reason": ..., ["ended_by": ..., "capture_error": ...,] kind, severity, ...}

- A finding is the same finding from one look to the next when its kind and the keys that say what
  it is about (`IDENTITY`: group, member, topic, partition, producer, broker, api, error, client...)
  are; slow_broker and transaction_stall are episodes, so their start is part of it too. `id` is a
  short hash of that identity: a start and its end carry the same id.
- "start" (reason "new"): first seen; (reason "again") seen again after it had ended.
- "end": its end (its start when it has none) is QUIET_S seconds of capture time behind the newest
  exchange (reason "quiet": nothing new about it for that long); it is no longer listed (reason
  "gone": the list keeps the most severe 200); the capture ended (reason "capture ended", once, whatever
  ended it: `ended_by` says what, one of ENDED_BY, and `capture_error` the error when one ended it).
  `capture_end(kind, finished, error)` is what ended a capture that ended on its own, as the dashboard's
  state tells it; what stopped it from outside (a signal, q, --duration) only kwire.cli.live knows.

`event_line(event)` is one event as the line the log holds (JSON, newline included).

Pure: no clock, no files (kwire.cli.service writes the lines). Bounded: at most MAX_KNOWN findings
are remembered; the ended ones that ended first are forgotten first.
"""

from __future__ import annotations

import hashlib
import json

from kwire.analytics.finding_kinds import EPISODES
from kwire.analytics.findings import seconds
from kwire.native.series import NS
from kwire.safe_text import json_safe

QUIET_S = 60.0
MAX_KNOWN = 10_000
IDENTITY = ("group_id", "member_id", "topic", "partition", "producer_id", "broker", "api", "error", "client",
            "client_id", "side", "api_version", "violation", "rule")
# kinds whose start is part of what they are (kwire.analytics.finding_kinds declares them)

# What ended the capture: a "capture ended" end event's `ended_by` (docs/metrics.md).
REPLAY_FINISHED = "replay finished"  # the files replayed, or standard input, reached their end
CAPTURE_STOPPED = "capture stopped"  # a live capture ended on its own, with no error
FAILED = "error"                     # the capture or the pipeline failed (`capture_error` says how)
SIGNAL = "signal"                    # SIGINT or SIGTERM
QUIT = "quit"                        # q (or Esc) on the dashboard
DURATION = "duration"                # --duration elapsed
ENDED_BY = (REPLAY_FINISHED, CAPTURE_STOPPED, FAILED, SIGNAL, QUIT, DURATION)


def capture_end(kind: str, finished: bool, error: str | None) -> str | None:
    """What ended a capture that ended on its own (`finished`: no packet will come again), from the state's
    `kind` ("replay" or "live") and `error`; None while it runs."""
    if not finished:
        return None
    if error:
        return FAILED
    return REPLAY_FINISHED if kind == "replay" else CAPTURE_STOPPED


def finding_id(finding: dict) -> str:
    key = [finding["kind"]] + [[name, finding[name]] for name in IDENTITY if name in finding]
    if finding["kind"] in EPISODES:  # its start in epoch seconds to the µs, as ids have always been made
        key.append(["start", seconds(finding.get("start_ts_ns"))])
    return hashlib.sha1(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _moment(finding: dict) -> int:
    """Its latest moment (its end, else its start) in epoch ns (0 when it has neither)."""
    at = finding.get("end_ts_ns")
    if at is None:
        at = finding.get("start_ts_ns")
    return at if at is not None else 0


class FindingsTracker:
    def __init__(self, quiet_s: float = QUIET_S):
        self.quiet_ns = round(quiet_s * NS)
        self.known: dict[str, int] = {}     # id -> the latest moment seen of it (epoch ns)
        self.open: dict[str, dict] = {}     # id -> its latest document, while it has not ended

    def update(self, findings: list[dict], now_ns: int | None, ended: str | None = None,
               error: str | None = None) -> list[dict]:
        """The events since the last look, `now_ns` the capture time of the newest exchange (epoch ns; None before
        any); `ended` (one of ENDED_BY, with the `error` that ended it) when the capture has ended: every finding
        still open ends, with reason "capture ended"."""
        if ended is not None and ended not in ENDED_BY:
            raise ValueError(f"not a way a capture ends: {ended!r}")
        events = []
        listed = set()
        for finding in findings:
            fid = finding_id(finding)
            listed.add(fid)
            moment = _moment(finding)
            before = self.known.get(fid)
            if fid in self.open:
                self.open[fid] = finding
            elif before is None or moment > before:
                self.open[fid] = finding
                events.append(_event("start", fid, now_ns, "new" if before is None else "again", finding))
            self.known[fid] = moment if before is None else max(before, moment)
        for fid, finding in list(self.open.items()):
            reason = None
            if ended is not None:
                reason = "capture ended"
            elif fid not in listed:
                reason = "gone"
            elif now_ns is not None and now_ns - self.known[fid] >= self.quiet_ns:
                reason = "quiet"
            if reason:
                del self.open[fid]
                events.append(_event("end", fid, now_ns, reason, finding, _ending(ended, error)))
        self._forget()
        return events

    def _forget(self) -> None:
        if len(self.known) <= MAX_KNOWN:
            return
        ended = sorted((moment, fid) for fid, moment in self.known.items() if fid not in self.open)
        for _, fid in ended[:len(self.known) - MAX_KNOWN]:
            del self.known[fid]


def event_line(event: dict) -> str:
    """One event as one line of JSON (its newline included), what kwire.safe_text escapes escaped."""
    import orjson

    return json_safe(orjson.dumps(event, default=str, option=orjson.OPT_NON_STR_KEYS)).decode() + "\n"


def _ending(ended: str | None, error: str | None) -> dict:
    """The keys a "capture ended" event has after its reason: what ended the capture, and its error."""
    if ended is None:
        return {}
    return {"ended_by": ended, "capture_error": error} if ended == FAILED else {"ended_by": ended}


def _event(kind: str, fid: str, now_ns: int | None, reason: str, finding: dict, ending: dict | None = None) -> dict:
    at = None if now_ns is None else now_ns / NS  # deprecated: `at_ts_ns` in epoch seconds, kept for one release
    out = {"event": kind, "id": fid, "at_ts_ns": now_ns, "at": at, "reason": reason, **(ending or {})}
    out.update(finding)
    return out
