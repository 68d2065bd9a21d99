"""An exchange's JSON line put together from cached parts, in one orjson call: `inspect --json`'s common case.

`LineWriter(...).line(ex, default, hook, run, budget)` reads the exchange's fields (by name: any object with
kwire.model.Exchange's attributes), builds the 18-member object of kwire.render.jsonl's fast way and hands it to
orjson with `default` for the bodies' non-JSON values; it returns the line, or None when the exchange does not
fit (a missing time or size, enrichments in `extra`: the caller goes the general way). What the members mean
is the caller's: the writer is given the caches and functions that make them (`parts_of`, `outcomes_of`,
`errors_of`, `error_codes`), so nothing here knows Kafka. After orjson, the record budget the exchange drew on
(`hook.take_budget()`, or `budget`) is charged to `run`.

`LineRenderer` is a renderer's call: an exchange its `keep` turns down is None, one whose api is not in
`secret_apis` goes the fast way when `writer` is set (its line made `safe`), and any other, or one that does
not fit, is `self.general(ex, tried_fast)`'s (the subclass's: kwire.render.jsonl.JsonLines).

`RecordsHook` is orjson's `default` for such lines, one after another: a record set (of `records_type`) of whole
v2 batches becomes its summary's JSON text (kwire.native.batch_json), any other `summarize(data, budget)`'s
value; bytes become {"hex": ...}. The exchange's budget is made at its first record set (`run.budget()`) and
handed back by `take_budget()`.

`RunBudgets` is what a run's exchanges may spend on their record sets: `budget()` makes each exchange's
(`make(data, entries, batches, run_open)`: kwire.native.codec_budget.RecordBudget), `charge(budget)` counts what it
decompressed, and the exchanges refused a decompression once `limit` was used up (kwire.render.records_run).

Compiled (setup.py; json_line.pxd); run as Python, the same code. tests/render/test_jsonl_fast.py holds its
lines to the general way's on every committed capture.
"""

from __future__ import annotations

from kwire.native import batch_json

_EMPTY: list = []  # never changed
_BYTES = (bytes, bytearray, memoryview)
_EXACT_NS = 10**15


class LineWriter:
    """See the module's docstring. `parts`: a dict (client, broker, api_key, api, api_version, client_id,
    status, unanswered) -> the two fragments of those members, `parts_of(key)` making a missing one;
    `outcomes_of(request_outcome, response_outcome)` -> their fragment, `decoded_pair` (and `decoded`, the
    outcome of a decoded body) the common one; `error_codes(ex)` -> the codes its response holds;
    `errors_of(ex, codes)` -> (their error_codes member, their errors member)."""

    def __init__(self, dumps, options: int, parts: dict, parts_of, outcomes_of, decoded, decoded_pair,
                 error_codes, errors_of):
        self.dumps = dumps
        self.options = options
        self.parts = parts
        self.parts_of = parts_of
        self.outcomes_of = outcomes_of
        self.decoded = decoded
        self.decoded_pair = decoded_pair
        self.error_codes = error_codes
        self.errors_of = errors_of

    def line(self, ex, default, hook, run, budget):
        """The line, or None (see the module's docstring)."""
        request_ts = ex.request_ts_ns
        response_ts = ex.response_ts_ns
        request_size = ex.request_size
        response_size = ex.response_size
        if request_ts is None or response_ts is None or request_size is None or response_size is None or ex.extra:
            return None
        key = (ex.client, ex.broker, ex.api_key, ex.api, ex.api_version, ex.client_id, ex.status, ex.unanswered)
        parts = self.parts.get(key)
        if parts is None:
            parts = self.parts_of(key)
        req, resp = ex.request_outcome, ex.response_outcome
        if req is self.decoded and resp is self.decoded:
            outcomes = self.decoded_pair
        else:
            outcomes = self.outcomes_of(req, resp)
        found = self.error_codes(ex)
        if found:
            codes, errors = self.errors_of(ex, found)
        else:
            codes = errors = _EMPTY
        # round(latency, 6) and the seconds' round(…, 9), without their cost where they change nothing: a
        # difference of nanoseconds under 10**15 divided by 1e6 is already the double nearest its 6-decimal
        # value, and from 2**23 s on a double's spacing is over 1 ns.
        took = response_ts - request_ts
        latency = took / 1e6 if -_EXACT_NS < took < _EXACT_NS else round(took / 1e6, 6)
        seconds = request_ts / 1e9
        if seconds < 8388608.0:
            seconds = round(seconds, 9)
        try:
            line = self.dumps({
                "ts_ns": request_ts,
                "request_ts_ns": request_ts,
                "response_ts_ns": response_ts,
                "client": parts[0],  # client ... api_version
                "correlation_id": ex.correlation_id,
                "client_id": parts[1],  # client_id, status, unanswered
                "error_codes": codes,
                "latency_ms": latency,
                "request_bytes": request_size,
                "response_bytes": response_size,
                "request": ex.request,
                "response": ex.response,
                "request_outcome": outcomes,  # request_outcome ... response_trailing_bytes
                "connection_id": ex.connection_id,
                "ts": seconds,
                "errors": errors,
                "request_size": request_size,
                "response_size": response_size,
            }, default=default, option=self.options)
        finally:
            if hook is not None:
                budget = hook.take_budget()
        if run is not None and budget is not None:
            run.charge(budget)
        return line


class RecordsHook:
    """See the module's docstring. `crc32c`, `attributes_json`, `fragment`: kwire.native.batch_json's."""

    def __init__(self, run, records_type, summarize, crc32c, attributes_json, fragment):
        self.run = run
        self.budget = None
        self.records_type = records_type
        self.summarize = summarize
        self.crc32c = crc32c
        self.attributes_json = attributes_json
        self.fragment = fragment

    def __call__(self, value):
        if type(value) is self.records_type:
            budget = self.budget
            if budget is None:
                budget = self.budget = self.run.budget()
            made = batch_json.summary_fragment(value.data, budget, self.crc32c, self.attributes_json, self.fragment)
            return made if made is not None else self.summarize(value.data, budget)
        if isinstance(value, _BYTES):
            return {"hex": bytes(value).hex()}
        raise TypeError(f"{type(value).__name__} is not JSON serializable")

    def take_budget(self):
        """The budget the exchange just written drew on (None if it had no record set); forgotten here."""
        budget = self.budget
        self.budget = None
        return budget


class LineRenderer:
    """See the module's docstring. `hook`: the RecordsHook the writer's lines draw on, `run` the budgets'."""

    def __init__(self, writer, hook, run, keep, secret_apis, safe):
        self.writer = writer
        self.hook = hook
        self.run = run
        self.keep = keep
        self.secret_apis = secret_apis
        self.safe = safe

    def __call__(self, ex):
        if self.keep is not None and not self.keep(ex):
            return None
        api_key = ex.api_key
        if self.writer is not None and api_key is not None and api_key not in self.secret_apis:
            try:
                line = self.writer.line(ex, self.hook, self.hook, self.run, None)
            except (TypeError, ValueError):
                line = None
            if line is not None:
                return self.safe(line)
            return self.general(ex, True)
        return self.general(ex, False)


class RunBudgets:
    """See the module's docstring."""

    def __init__(self, make, limit: int, data: int, entries: int, batches: int):
        self.make = make
        self.limit = limit
        self.used = 0  # bytes decompressed so far, failures included
        self.refused = 0  # exchanges that asked to open a compressed batch after the limit
        self.data, self.entries, self.batches = data, entries, batches

    def budget(self):
        """A fresh budget for the next exchange (in capture order)."""
        return self.make(self.data, self.entries, self.batches, self.used < self.limit)

    def charge(self, budget) -> None:
        """What the exchange given `budget` spent, charged to the run."""
        self.used += budget.decompressed
        if budget.gated and not budget.run_open:
            self.refused += 1
