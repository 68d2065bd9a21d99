"""JSON Lines: one object per exchange, keys as documented in docs/jsonl.md and docs/vocabulary.md.

The facts an exchange shares with the Parquet table and the data source have their names and units
(kwire.native.exchange_facts: `error_codes`, `request_bytes`, `latency_ms`, `ts_ns`, the outcome kinds);
the keys they replaced (`ts`, `errors`, `request_size`, `response_size`) are kept, with their old
meaning, for one release (DEPRECATED_KEYS, docs/changes.md).

`exchange_record(ex)` is the object as plain Python data; `exchange_json(ex)` is its JSON text, made
the fast way: the decoded bodies go to the C encoder as they are and only their non-JSON values
(record sets, bytes) pass through `kwire.render.values.json_default`. Bodies of apis that can carry
secrets (values.SECRET_APIS) are walked by `plain_body` first, so redaction never depends on the
fast path. When orjson is installed it does the encoding (several times faster than the standard
library's); anything it refuses (an integer past 64 bits, say) falls back to the standard encoder.
The two differ only in how they spell some floats (1e-06 vs 1e-6) and non-finite ones (NaN vs null).

`inspect --json` (JsonLines) writes most lines the fastest way (`_fast_line`, orjson 3.10 on): the
members many exchanges share are written once and cached as orjson Fragments, so each line is one
orjson call on an object of 18 keys; record sets are summarised through one SummaryHook per renderer
(kwire.render.values), which makes the exchange's budget when it meets its first record set. The
bytes are those of the general way (a test compares both on every committed capture).

Every line leaves through kwire.safe_text.json_safe: orjson writes C1 controls and bidi or other format
characters raw, which the line then holds as \\uXXXX escapes (one C-level scan when it is ASCII).

The record sets of one exchange share one record budget, drawn from the run's (`run`, a
kwire.render.records_run.RecordsRun; a fresh one per exchange when none is given). With decoded
records, the room their JSON may take is asked for before orjson writes it (`_room_for`): orjson
crashes when it cannot grow its buffer, a MemoryError is one line.
"""

from __future__ import annotations

import json
import mmap

try:
    import orjson
except ImportError:  # pragma: no cover - optional speed-up
    orjson = None

from kwire.native.exchange_facts import error_code_names
from kwire.codec.marks import carries_records
from kwire.kafka.error_codes import error_name
from kwire.model import Exchange
from kwire.native.json_line import LineRenderer, LineWriter
from kwire.outcomes import DECODED_BODY, error_text, kind_of, trailing_size
from kwire.native.exchange_errors import response_error_codes
from kwire.render.records_run import RecordsRun
from kwire.render.values import SECRET_APIS, SummaryHook, json_default, plain_body
from kwire.safe_text import json_safe

_ENCODERS: dict[str, json.JSONEncoder] = {}
_DEFAULTS: dict[str, object] = {}


def _encoder(records: str, budget) -> json.JSONEncoder:
    if budget is not None:
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False,
                                default=json_default(records, budget))
    enc = _ENCODERS.get(records)
    if enc is None:
        enc = _ENCODERS[records] = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                                    check_circular=False, default=json_default(records))
    return enc


def _default(records: str, budget):
    if budget is not None:
        hook = json_default(records, budget)
        if records != "full":
            return hook

        room = [0]  # what orjson's buffer may have grown to (asked for already)

        def default(value):
            plain = hook(value)
            room[0] = _room_for(ESCAPED * budget.decoded, room[0])
            return plain

        return default
    default = _DEFAULTS.get(records)
    if default is None:
        default = _DEFAULTS[records] = json_default(records)
    return default


# orjson crashes (SIGSEGV) when it cannot grow its output buffer, as under a memory limit (ulimit -v,
# RLIMIT_AS). Before it writes decoded records, the room their JSON may need is asked for (address
# space only: an anonymous mapping, never touched, unmapped at once), so a limit ends in MemoryError,
# which kwire reports in one line. A record byte is at most 6 in JSON ("\u0001"), 7 with the rest of
# the line, and orjson doubles its buffer as it grows: the room asked for is the power of two above.
ESCAPED = 7
MIN_PROBE = 16 << 20


def _room_for(output: int, had: int) -> int:
    """Ask for the room a buffer growing from `had` bytes to hold `output` bytes needs; returns
    the size it may reach."""
    if output < MIN_PROBE:
        return had
    size = 1 << (output - 1).bit_length()
    if size > had:
        try:
            mmap.mmap(-1, size - had).close()
        except OSError as e:
            raise MemoryError(f"no room for {size:,} bytes of JSON") from e
    return max(size, had)


def _budget(ex: Exchange, run: RecordsRun | None):
    """The exchange's record budget; None when its api has no records field (nothing will draw on it)."""
    if not carries_records(ex.api_key):
        return None
    return (run or RecordsRun()).budget()


def _seconds(ts_ns: int) -> float:
    """ts_ns in seconds, rounded to the nanosecond. From 2**23 s on (1970-04-08) a double's spacing is
    over 1 ns, so the quotient is already the double nearest the rounded decimal: round() would
    return it unchanged, at a cost."""
    seconds = ts_ns / 1e9
    return seconds if seconds >= 8388608.0 else round(seconds, 9)


# Old key -> the key that replaced it; each is still written, with its old meaning, for one release.
DEPRECATED_KEYS = {"ts": "ts_ns", "errors": "error_codes", "request_size": "request_bytes",
                   "response_size": "response_bytes"}


def _record(ex: Exchange, request, response) -> dict:
    latency = ex.latency_ms
    req, resp = ex.request_outcome, ex.response_outcome
    ts_ns = ex.ts_ns
    found = response_error_codes(ex)
    out = {
        "ts_ns": ts_ns,
        "request_ts_ns": ex.request_ts_ns,
        "response_ts_ns": ex.response_ts_ns,
        "client": ex.client,
        "broker": ex.broker,
        "api_key": ex.api_key,
        "api": ex.api,
        "api_version": ex.api_version,
        "correlation_id": ex.correlation_id,
        "client_id": ex.client_id,
        "status": ex.status,
        "unanswered": ex.unanswered,
        "error_codes": error_code_names(ex, found)[0],
        "latency_ms": round(latency, 6) if latency is not None else None,
        "request_bytes": ex.request_size,
        "response_bytes": ex.response_size,
        "request": request,
        "response": response,
        "request_outcome": kind_of(req),
        "response_outcome": kind_of(resp),
        "request_error": error_text(req),
        "response_error": error_text(resp),
        "request_trailing_bytes": trailing_size(req),
        "response_trailing_bytes": trailing_size(resp),
        "connection_id": ex.connection_id,
        # deprecated (DEPRECATED_KEYS)
        "ts": _seconds(ts_ns),
        "errors": [error_name(code) for code in found],
        "request_size": ex.request_size,
        "response_size": ex.response_size,
    }
    if ex.extra:
        out.update(ex.extra)
    return out


def exchange_record(ex: Exchange, *, records: str = "summary", show_secrets: bool = False,
                    run: RecordsRun | None = None) -> dict:
    budget = _budget(ex, run)
    record = _record(ex, plain_body(ex.request, records, show_secrets, ex.api_key, budget),
                     plain_body(ex.response, records, show_secrets, ex.api_key, budget))
    if run is not None and budget is not None:
        run.charge(budget)
    return record


def exchange_json(ex: Exchange, *, records: str = "summary", show_secrets: bool = False) -> str:
    return exchange_json_line(ex, records=records, show_secrets=show_secrets)[:-1].decode()


def exchange_json_line(ex: Exchange, *, records: str = "summary", show_secrets: bool = False,
                       run: RecordsRun | None = None, hook: SummaryHook | None = None) -> bytes:
    """The exchange's JSON object as UTF-8 bytes, newline included: what `inspect --json` writes
    (unsafe characters escaped: kwire.safe_text.json_safe). `hook`: with records="summary", the
    renderer's SummaryHook on `run` (made here when not given)."""
    return json_safe(_json_line(ex, records, show_secrets, run, hook))


def _json_line(ex: Exchange, records: str, show_secrets: bool, run: RecordsRun | None,
               hook: SummaryHook | None, tried_fast: bool = False) -> bytes:
    """The line, the fast way when it fits (unless `tried_fast`: the caller found it does not), else the
    general way."""
    if _FAST and not tried_fast and ex.api_key is not None and ex.api_key not in SECRET_APIS:
        if records != "summary":
            hook = None
        elif hook is None:
            hook = SummaryHook(run if run is not None else RecordsRun())
        try:
            line = _fast_line(ex, records, run, hook)
        except (TypeError, ValueError):  # the general way below says what went wrong, or falls back
            line = None
        if line is not None:
            return line
    budget = None
    if ex.api_key in SECRET_APIS or ex.api_key is None:
        record = exchange_record(ex, records=records, show_secrets=show_secrets, run=run)
    else:
        record = _record(ex, ex.request, ex.response)
        budget = _budget(ex, run)
    if orjson is not None:
        try:
            line = orjson.dumps(record, default=_default(records, budget), option=_ORJSON_OPTIONS)
        except (TypeError, ValueError) as e:  # orjson.JSONEncodeError is both
            if isinstance(e.__cause__, MemoryError):  # _room_for, or the decoding, ran out of memory
                raise e.__cause__ from None
            budget = _budget(ex, run) if budget is not None else None  # the standard encoder starts afresh
        else:
            if run is not None and budget is not None:
                run.charge(budget)
            return line
    line = (_encoder(records, budget).encode(record) + "\n").encode("utf-8", "replace")
    if run is not None and budget is not None:
        run.charge(budget)
    return line


# ---- the fast way: one orjson call on a smaller object, with parts made once ------------------------
#
# orjson writes an object's members one after the other, each the same whatever surrounds it, so the
# members that many exchanges share are written once and cached as orjson.Fragments (JSON written as
# it is): the connection's and api's (client ... api_version), the client's (client_id, status,
# unanswered), the outcomes' (request_outcome ... response_trailing_bytes). Each stands as the value
# of the first key of its run, its other members following it inside the fragment: the line has 18
# keys to write instead of 29, the same bytes. Exchanges this does not fit (a missing time or size,
# enrichments in `extra`, an api whose bodies can hold secrets) or that orjson refuses (an integer
# past 64 bits) go the general way, which builds the whole object (_record) and falls back as it does.

MAX_CACHED = 4096  # entries of each cache of parts (a capture of many connections clears and refills it)
_PARTS: dict[tuple, tuple[bytes, bytes]] = {}
_OUTCOMES: dict[tuple, bytes] = {}


def _members(obj: dict):
    """The members of a JSON object as orjson writes them, without the braces: the value of the
    object's first key followed by the others, as an orjson.Fragment (written as it is)."""
    text = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)[1:-1]
    return orjson.Fragment(text[text.index(b":") + 1:])


def _parts(key: tuple) -> tuple[bytes, bytes]:
    client, broker, api_key, api, api_version, client_id, status, unanswered = key
    parts = (_members({"client": client, "broker": broker, "api_key": api_key, "api": api, "api_version": api_version}),
             _members({"client_id": client_id, "status": status, "unanswered": unanswered}))
    if len(_PARTS) >= MAX_CACHED:
        _PARTS.clear()
    _PARTS[key] = parts
    return parts


def _outcome_members(req, resp) -> bytes:
    key = (req, resp)
    members = _OUTCOMES.get(key)
    if members is None:
        members = _members({"request_outcome": kind_of(req), "response_outcome": kind_of(resp),
                            "request_error": error_text(req), "response_error": error_text(resp),
                            "request_trailing_bytes": trailing_size(req),
                            "response_trailing_bytes": trailing_size(resp)})
        if len(_OUTCOMES) >= MAX_CACHED:
            _OUTCOMES.clear()
        _OUTCOMES[key] = members
    return members


def _errors_of(ex: Exchange, found) -> tuple[list, list]:
    """The error_codes and errors members of an exchange whose response holds the codes `found`."""
    return error_code_names(ex, found)[0], [error_name(code) for code in found]


def _fast_line(ex: Exchange, records: str, run: RecordsRun | None, hook: SummaryHook | None) -> bytes | None:
    """The line put together from parts (by the native core: kwire.native.json_line); None when the
    exchange must go the general way. `hook`: the SummaryHook with records="summary" (it makes the
    exchange's budget), else None. (_WRITER is looked up where it is called, so that tests can count or
    refuse the fast way.)"""
    if hook is not None:
        return _WRITER.line(ex, hook, hook, run, None)
    budget = _budget(ex, run)
    return _WRITER.line(ex, _default(records, budget), None, run, budget)


class JsonLines(LineRenderer):
    """`inspect --json`'s renderer as one picklable object (worker processes get a copy):
    exchange -> its JSON line as bytes, or None when `keep` (a filter such as
    kwire.query.ExchangeFilter) turns it down. `run`: the run's record budgets (kept where the
    exchanges that carry records are rendered: see kwire.render.records_run). The call is the native
    core's (kwire.native.json_line.LineRenderer: the fast way, through _WRITER as it was when the
    renderer was made); `general` is the rest."""

    __slots__ = ("records", "show_secrets")

    def __init__(self, records: str = "summary", show_secrets: bool = False, keep=None,
                 run: RecordsRun | None = None):
        run = run if run is not None else RecordsRun()
        keep = keep if getattr(keep, "active", True) else None  # None: a filter that turns nothing down
        writer = _WRITER if _FAST and records == "summary" else None
        super().__init__(writer, SummaryHook(run), run, keep, SECRET_APIS, json_safe)
        self.records = records
        self.show_secrets = show_secrets

    def general(self, ex: Exchange, tried_fast: bool) -> bytes:
        """The line the general way (or the fast way when the call has not tried it: records not "summary")."""
        if tried_fast:
            return json_safe(_json_line(ex, "summary", self.show_secrets, self.run, self.hook, tried_fast=True))
        return exchange_json_line(ex, records=self.records, show_secrets=self.show_secrets, run=self.run,
                                  hook=self.hook)

    def __reduce__(self):
        return (JsonLines, (self.records, self.show_secrets, self.keep, self.run))


_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE if orjson is not None else 0
_BODY_OPTIONS = orjson.OPT_NON_STR_KEYS if orjson is not None else 0
# The fast way's one call: keys that are all strings (as decoded bodies' are) are written orjson's fastest way
# (OPT_NON_STR_KEYS makes it collect every object's members first); a body with another key makes orjson refuse
# (TypeError) and the exchange goes the general way, as a refused integer does: the same line either way.
_FAST_OPTIONS = orjson.OPT_APPEND_NEWLINE if orjson is not None else 0
_FAST = orjson is not None and hasattr(orjson, "Fragment")  # orjson 3.10 on
_DECODED_PAIR = _outcome_members(DECODED_BODY, DECODED_BODY) if _FAST else None
_WRITER = LineWriter(orjson.dumps if _FAST else None, _FAST_OPTIONS, _PARTS, _parts, _outcome_members, DECODED_BODY,
                     _DECODED_PAIR, response_error_codes, _errors_of)
