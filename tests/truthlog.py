"""Ground truth for captures: a parser of librdkafka `debug=protocol` logs (CAPTURE.truth.log).

What it owns: turning the client log written next to each capture by scripts/record_capture.py into
records that tests compare kwire's exchanges with. It reads librdkafka's stderr format
(`%7|<unix s.ms>|SEND|<client>| [thrd:<thread>]: <broker>: Sent ...`) and the Python-logger format
(`SEND [<client>] [thrd:<thread>]: <broker>: Sent ...`); other lines (kcat's `% ...` notes, `#`
comments, other debug facilities) are skipped, never an error.

The lines it reads (librdkafka 2.0 .. 2.16):
    Sent <Api>Request (v<ver>, <size> bytes @ <offset>, CorrId <corr>)
    Sent partial <Api>Request (v<ver>, <offset>+<written>/<size> bytes, CorrId <corr>)
    Received <Api>Response (v<ver>, <size> bytes, CorrId <corr>, rtt <ms>ms)
Sizes, checked against tshark on the committed captures:
    Sent size     = the whole request frame, 4-byte length prefix included (length field + 4);
    Received size = the response frame after length and correlation id (length field - 4).

A connection is (client, thread): librdkafka names each broker thread once ("127.0.0.1:P/bootstrap",
"127.0.0.1:P/2", "GroupCoordinator"), while the broker name in the message may change (2.0 renames
".../bootstrap" to ".../1" after Metadata) or carry no address ("GroupCoordinator/2"); `address` is
resolved through the node id whenever the log shows that node's host:port anywhere.
Correlation ids are per connection, so pairs are keyed (client, thread, corr id).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from kwire.kafka.apis import API_BY_NAME

# librdkafka's names that differ from Kafka's (rd_kafka_ApiKey2str), and renamed apis.
_NAME_ALIASES = {"apiversion": "ApiVersions", "alterisr": "AlterPartition", "offset": "ListOffsets"}

_STDERR_LINE = re.compile(r"^%(?P<level>\d)\|(?P<ts>\d+(?:\.\d+)?)\|(?P<fac>[^|]*)\|(?P<client>[^|]*)\| (?P<msg>.*)$")
_LOGGER_LINE = re.compile(r"(?:^|\s)(?P<fac>[A-Z][A-Z0-9_]*) \[(?P<client>[^\]]+)\] (?P<msg>\[thrd:.*)$")
_MESSAGE = re.compile(r"^\[thrd:(?P<thread>[^\]]*)\]: (?P<broker>\S+): (?P<text>.*)$")
_SENT = re.compile(r"^Sent (?P<name>\S+?)Request \(v(?P<ver>\d+), (?P<size>\d+) bytes(?: @ (?P<of>\d+))?, "
                   r"CorrId (?P<corr>-?\d+)\)")
_PARTIAL = re.compile(r"^Sent partial (?P<name>\S+?)Request \(v(?P<ver>\d+), (?P<of>\d+)\+(?P<written>\d+)/"
                      r"(?P<size>\d+) bytes, CorrId (?P<corr>-?\d+)\)")
_RECEIVED = re.compile(r"^Received (?P<name>\S+?)Response \(v(?P<ver>\d+), (?P<size>\d+) bytes, "
                       r"CorrId (?P<corr>-?\d+), rtt (?P<rtt>\d+(?:\.\d+)?)ms\)")
_CONNECTED = re.compile(r"^Connected \(#(?P<n>\d+)\)")
_BROKER = re.compile(r"^(?:[a-z_]+://)?(?P<where>.*)/(?P<id>[^/]+)$")
_HOSTPORT = re.compile(r"^(?P<host>\[[^\]]+\]|[^:/]+|[0-9a-fA-F:]+):(?P<port>\d+)$")
_MOCK = re.compile(r"Mock cluster enabled: .* replaced with (?P<list>\S+)")
_INIT = re.compile(r"librdkafka v(?P<version>\S+) \(")

SENT, RECEIVED, PARTIAL = "sent", "received", "partial"


@dataclass(frozen=True, slots=True)
class TruthRecord:
    """One request sent or response received, as the client logged it."""

    direction: str  # "sent", "received", or "partial" (a request written in several calls)
    api: str  # Kafka's name (kwire.kafka.apis), e.g. "ApiVersions"; librdkafka's if unknown
    api_key: int | None
    version: int
    size: int  # see the module docstring for what each direction counts
    corr_id: int
    rtt_ms: float | None  # received only
    offset: int | None  # sent: the "@ N" write offset (0 unless the request went out in pieces)
    client: str  # librdkafka instance name: "<client.id>#producer-1"
    thread: str  # broker thread, stable for the connection's life: "127.0.0.1:40411/bootstrap"
    broker: str  # broker name as logged: "127.0.0.1:40411/1", "GroupCoordinator/1"
    node_id: int | None  # None for bootstrap brokers
    address: str | None  # "host:port" when the log shows it (directly or through node_id)
    conn: int  # the N of the last "Connected (#N)" on this connection (0 if not logged)
    ts: float | None  # seconds since the epoch, millisecond precision (stderr format only)
    line_no: int  # 1-based
    rdkafka_api: str  # the name as logged, e.g. "ApiVersion"

    @property
    def connection(self) -> tuple[str, str]:
        return (self.client, self.thread)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.client, self.thread, self.corr_id)

    @property
    def port(self) -> int | None:
        if self.address is None:
            return None
        return int(self.address.rsplit(":", 1)[1])


@dataclass(frozen=True, slots=True)
class TruthExchange:
    """A request and its response (None when the client never logged one: closed or timed out)."""

    request: TruthRecord
    response: TruthRecord | None


def api_key_of(rdkafka_name: str) -> tuple[str, int | None]:
    """(Kafka's api name, key) for a name as librdkafka logs it ("ApiVersion" -> ("ApiVersions", 18))."""
    name = rdkafka_name
    while name.endswith("Request"):  # older librdkafka tables had "ElectLeadersRequest" etc.
        name = name[: -len("Request")]
    unknown = re.fullmatch(r"Unknown-(\d+)\??", name)
    if unknown:
        return name, int(unknown.group(1))
    name = _NAME_ALIASES.get(name.lower(), name)
    spec = API_BY_NAME.get(name.lower())
    return (spec.name, spec.key) if spec else (name, None)


def _split_broker(broker: str) -> tuple[str | None, int | None]:
    match = _BROKER.match(broker)
    if not match:
        return None, None
    where, ident = match.group("where"), match.group("id")
    address = where if _HOSTPORT.match(where) else None
    node_id = int(ident) if ident.lstrip("-").isdigit() else None
    return address, node_id


def _fields(line: str) -> tuple[float | None, str, str, str] | None:
    """(timestamp, facility, client, message) of a librdkafka log line, or None."""
    match = _STDERR_LINE.match(line)
    if match:
        return float(match.group("ts")), match.group("fac"), match.group("client"), match.group("msg")
    match = _LOGGER_LINE.search(line)
    if match:
        return None, match.group("fac"), match.group("client"), match.group("msg")
    return None


def parse(lines: str | Iterable[str], partial: bool = False) -> list[TruthRecord]:
    """Every Sent/Received line, in log order (and "Sent partial" lines when `partial`)."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    records: list[TruthRecord] = []
    conns: dict[tuple[str, str], int] = {}
    node_address: dict[int, str] = {}
    for line_no, line in enumerate(lines, 1):
        fields = _fields(line.rstrip("\n"))
        if fields is None:
            continue
        ts, _fac, client, msg = fields
        match = _MESSAGE.match(msg)
        if not match:
            continue
        thread, broker, text = match.group("thread"), match.group("broker"), match.group("text")
        address, node_id = _split_broker(broker)
        if address is None:
            thread_address, _ = _split_broker(thread)
            if thread_address is not None and not thread.endswith("/internal"):
                address = thread_address
        if address is not None and node_id is not None:
            node_address.setdefault(node_id, address)
        connected = _CONNECTED.match(text)
        if connected:
            conns[(client, thread)] = int(connected.group("n"))
            continue
        for direction, pattern in ((SENT, _SENT), (RECEIVED, _RECEIVED), (PARTIAL, _PARTIAL)):
            found = pattern.match(text)
            if found:
                break
        else:
            continue
        if direction == PARTIAL and not partial:
            continue
        api, api_key = api_key_of(found.group("name"))
        offset = found.groupdict().get("of")
        rtt = found.groupdict().get("rtt")
        records.append(TruthRecord(
            direction=direction, api=api, api_key=api_key, version=int(found.group("ver")),
            size=int(found.group("size")), corr_id=int(found.group("corr")),
            rtt_ms=float(rtt) if rtt is not None else None,
            offset=int(offset) if offset is not None else None,
            client=client, thread=thread, broker=broker, node_id=node_id, address=address,
            conn=conns.get((client, thread), 0), ts=ts, line_no=line_no, rdkafka_api=found.group("name")))
    # Second pass: names without an address ("GroupCoordinator/2") get the node's host:port.
    return [replace(r, address=node_address[r.node_id])
            if r.address is None and r.node_id in node_address else r for r in records]


def read(path: str | Path, partial: bool = False) -> list[TruthRecord]:
    """parse() of a truth log file."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse(handle, partial=partial)


def pair(records: Iterable[TruthRecord]) -> list[TruthExchange]:
    """Requests with their responses, matched by (client, thread, corr id); in request order."""
    exchanges: list[TruthExchange] = []
    pending: dict[tuple[str, str, int], int] = {}
    for record in records:
        if record.direction == SENT:
            pending[record.key] = len(exchanges)
            exchanges.append(TruthExchange(record, None))
        elif record.direction == RECEIVED:
            index = pending.pop(record.key, None)
            if index is not None:
                exchanges[index] = TruthExchange(exchanges[index].request, record)
    return exchanges


def broker_addresses(records: Iterable[TruthRecord]) -> dict[int, str]:
    """node id -> "host:port", as far as the records show it."""
    found: dict[int, str] = {}
    for record in records:
        if record.node_id is not None and record.address is not None:
            found.setdefault(record.node_id, record.address)
    return found


def broker_ports(records: Iterable[TruthRecord]) -> set[int]:
    """Every server port the clients talked to: what tshark needs as `-d tcp.port==P,kafka`."""
    return {record.port for record in records if record.port is not None}


def mock_bootstraps(text: str) -> list[str]:
    """The mock cluster's "host:port" list from librdkafka's MOCK line ([] if there is none)."""
    match = _MOCK.search(text)
    return match.group("list").split(",") if match else []


def librdkafka_versions(text: str) -> set[str]:
    """The librdkafka versions the log's clients ran ("2.16.0", and kcat's "2.0.2")."""
    return {match.group("version") for match in _INIT.finditer(text)}


def header(text: str) -> dict:
    """The recorder's '# kwire record_capture: {...}' line merged with its '# summary: {...}' line."""
    found: dict = {}
    for line in text.splitlines():
        for prefix in ("# kwire record_capture: ", "# summary: "):
            if line.startswith(prefix):
                found.update(json.loads(line[len(prefix):]))
    return found
