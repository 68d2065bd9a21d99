"""Extract (runs on executors): one capture file -> keyed packet records, plus a report on the file.

`file_records(file_index, path, parts)` reads a capture with kwire's own readers and yields, for
every TCP packet, `((part, flow, ts_ns, file_index, packet_index), (linktype, data, wire_len))`:

- flow: the connection's canonical key as bytes (lower ip, port, higher ip, port; the same order as
  kwire.tcp.flows.FlowKey), so both directions of a connection, in every file, share one key;
- part: crc32(flow) mod parts, the shuffle partition that connection goes to;
- the rest of the key orders a connection's packets as `kwire stats` reads them: by capture time,
  ties by file order then by order in the file.

Packets that are not TCP are only counted (kwire.net.decode's counters). After the last packet, the
file's FileReport (packets, bytes, last timestamp, link types, net counters, and the CaptureError
message if the file is damaged or unreadable) is yielded once for every partition, with flow b""
so it sorts before that partition's packets: every decoding task thus knows the time at which the
whole capture ends. A damaged file never raises: its good packets come first, then its report.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import asdict, dataclass, field

from kwire.capture.files import CaptureReader
from kwire.capture.stats import CaptureStats
from kwire.errors import KwireError
from kwire.net.decode import SUPPORTED_LINKTYPES, DecodeCounters, decode_segment

_PORT = struct.Struct(">H").pack
REPORT_FLOW = b""


@dataclass(slots=True)
class FileReport:
    index: int
    path: str
    packets: int = 0
    captured_bytes: int = 0
    wire_bytes: int = 0
    truncated: int = 0
    tcp_packets: int = 0
    first_ts_ns: int | None = None
    last_ts_ns: int | None = None
    linktypes: list[int] = field(default_factory=list)
    net: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def unknown_linktypes(self) -> list[int]:
        return [lt for lt in self.linktypes if lt not in SUPPORTED_LINKTYPES]


def flow_bytes(src_ip: bytes, src_port: int, dst_ip: bytes, dst_port: int) -> bytes:
    if (src_ip, src_port) <= (dst_ip, dst_port):
        return src_ip + _PORT(src_port) + dst_ip + _PORT(dst_port)
    return dst_ip + _PORT(dst_port) + src_ip + _PORT(src_port)


def file_records(file_index: int, path: str, parts: int):
    report = FileReport(file_index, path)
    stats = CaptureStats()
    counters = DecodeCounters()
    k = 0
    last = None
    reader = None
    try:
        reader = CaptureReader(path, stats)
        for packet in reader:
            k += 1
            ts = packet.ts_ns
            last = ts
            if report.first_ts_ns is None:
                report.first_ts_ns = ts
            seg = decode_segment(packet, counters)
            if seg is None:
                continue
            flow = flow_bytes(seg.src_ip, seg.src_port, seg.dst_ip, seg.dst_port)
            report.tcp_packets += 1
            yield ((zlib.crc32(flow) % parts, flow, ts, file_index, k), (packet.linktype, packet.data, packet.wire_len))
    except KwireError as exc:
        report.error = str(exc)
    except OSError as exc:  # pragma: no cover - the capture layer maps I/O errors to CaptureError
        report.error = f"{path}: {exc.strerror or exc}"
    finally:
        if reader is not None:
            reader.close()
    report.packets = stats.packets
    report.captured_bytes = stats.captured_bytes
    report.wire_bytes = stats.wire_bytes
    report.truncated = stats.truncated
    report.last_ts_ns = last
    report.linktypes = sorted(stats.linktypes)
    report.net = {k: v for k, v in asdict(counters).items() if isinstance(v, int)}
    for part in range(parts):
        yield ((part, REPORT_FLOW, 0, file_index, 0), report)
