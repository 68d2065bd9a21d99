"""Test-only: the second hostile-input campaign's inputs (issue 25), one generator per class, seeded
and sized: `scale` 1 is what the tests run (small, seconds); scripts/campaign.py and docs/bounds.md
build them bigger (each stays under 20 MB).

Each generator writes a capture (and what else its case needs: a key log) with kwire's own pcap
writer (tests/campaign/traffic.py) or the committed captures, and returns nothing. The families:

quadratic (work that grew with the square of the input):
- `tls_detector_rescan`: mid-stream connections of 1-byte segments whose bytes look like record
  headers that never chain;
- `tls_gap_garbage`: a decryptable TLS 1.3 recording, a gap, then records that verify under no key;
- `assignment_repeats`: a SyncGroup answer whose assignment names one topic many times;
- `unanswered_joins`: many connections and many JoinGroups never answered;
- `excerpt_ranges`: one long connection with many exchanges, all kept by `-w`.
memory (grew with distinct names or entries):
- `many_names`: client ids, brokers (ports), share groups, partitions of one Fetch, all distinct;
- `big_metadata`: one Metadata answer naming very many partitions;
- `secrets_block`: a pcapng whose Decryption Secrets Block holds very many key log lines;
- `short_key_lines`: a key log file of two-byte lines;
- `client_hellos`: many connections that each send one TLS ClientHello.
times: `far_future`: group traffic past the year 9999 (and past int64 nanoseconds for spark).
wrong: `midstream_fake_tls`: plaintext Kafka captured mid-stream whose record values hold bytes
that look like TLS records; `big_first_request`: a connection captured mid-stream whose first
request is larger than the detection window.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

from kwire.capture.pcapwrite import PcapWriter
from tests.campaign.traffic import BROKER, ETHERNET, Traffic, client_address
from tests.codec.test_records_encoder import v2_batch
from tests.fuzz.conversation import ACK, PSH, ether_ipv4_tcp
from tests.kafka.frames import request_frame
from tests.render.hostile import encode_body, exchange, produce_exchange

ROOT = Path(__file__).resolve().parents[2]
TLS13 = ROOT / "captures" / "tls" / "py-tls13-aes128gcm.pcap"
GROUP_CAPTURE = ROOT / "captures" / "consumer-protocol-lz4.pcap"


class MidStream:
    """A connection whose handshake was not captured: segments only (and the other side's ACKs)."""

    def __init__(self, traffic: Traffic, client, broker=BROKER, seqs=(1000, 500_000)):
        self.traffic = traffic
        self.ends = (client, broker)
        self.seq = list(seqs)

    def send(self, direction: int, data: bytes, mss: int = 1448, ack: bool = True) -> None:
        src, dst = self.ends[direction], self.ends[1 - direction]
        for i in range(0, len(data), mss):
            piece = data[i:i + mss]
            self.traffic.packet(src, dst, self.seq[direction], self.seq[1 - direction], ACK | PSH, piece)
            self.seq[direction] += len(piece)
        if ack:
            self.traffic.packet(dst, src, self.seq[1 - direction], self.seq[direction], ACK)

    def skip(self, direction: int, n: int) -> None:
        """n bytes of this direction never captured (a gap)."""
        self.seq[direction] += n


def _metadata_exchange(corr: int, client_id: str, topics=(("t", 1),)):
    return exchange(3, 9, corr, client_id, {"Topics": [{"Name": name} for name, _ in topics]},
                    {"Brokers": [{"NodeId": 1, "Host": "broker", "Port": 9092}],
                     "Topics": [{"Name": name, "Partitions": [{"PartitionIndex": p} for p in range(n)]}
                                for name, n in topics]})


# ---- quadratic ---------------------------------------------------------------------------------


def tls_detector_rescan(path, scale: int = 1) -> None:
    """Connections captured mid-stream whose client sends 1-byte segments of b"\\x17\\x03\\x03\\x40\\x00"
    repeated (every fifth byte starts a plausible record header; no two ever chain), for a little
    more than the detection window of one direction."""
    pattern = b"\x17\x03\x03\x40\x00"
    data = pattern * (8_000 * scale)
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        for c in range(2):
            conn = MidStream(traffic, client_address(c))
            for i in range(len(data)):
                conn.send(0, data[i:i + 1], ack=False)


def tls_gap_garbage(path, scale: int = 1, seed: int = 1) -> None:
    """The committed TLS 1.3 recording (its key log beside it: `path`.keys), then in its decrypted
    Produce connection a gap of 2,000 bytes from the client and `600 * scale` application-data
    records of random bytes that verify under no key and no sequence number."""
    from kwire.capture.files import read_captures
    from kwire.native.net_decode import decode_segment

    rng = random.Random(seed)
    packets = list(read_captures([str(TLS13)]))
    Path(str(path) + ".keys").write_bytes(Path(str(TLS13) + ".keys").read_bytes())
    last = None
    for index, packet in enumerate(packets):  # the last client -> broker data segment of a connection to 9093
        seg = decode_segment(packet)
        if seg is not None and seg.dst_port == 9093 and len(seg.payload) > 0:
            last = (index, packet, seg)
    index, packet, seg = last
    seq = seg.seq + len(seg.payload) + 2_000
    client, broker = (seg.src_ip, seg.src_port), (seg.dst_ip, seg.dst_port)
    garbage = []
    for _ in range(600 * scale):  # before the connection's FIN, at the time of its last segment
        body = rng.randbytes(rng.randrange(17, 64))
        rec = bytes([23, 3, 3]) + struct.pack(">H", len(body)) + body
        garbage.append(_raw_ipv4_tcp(packets[0].linktype, client, broker, seq, seg.ack, rec))
        seq += len(rec)
    with PcapWriter(str(path), packets[0].linktype) as writer:
        for p in packets[:index + 1]:
            writer.write_packet(p.ts_ns, bytes(p.data))
        for frame in garbage:
            writer.write_packet(packet.ts_ns, frame)
        for p in packets[index + 1:]:
            writer.write_packet(p.ts_ns, bytes(p.data))


def _raw_ipv4_tcp(linktype: int, src, dst, seq: int, ack: int, payload: bytes) -> bytes:
    frame = ether_ipv4_tcp(src, dst, seq, ack, ACK | PSH, payload)
    if linktype == 1:
        return frame
    if linktype in (0, 108):  # null / loopback: a 4-byte family
        return struct.pack("<I", 2) + frame[14:]
    if linktype == 113:  # Linux cooked
        return b"\x00\x00\x03\x04\x00\x06" + b"\x00" * 8 + b"\x08\x00" + frame[14:]
    return frame[14:]  # raw IP


def assignment_repeats(path, scale: int = 1) -> None:
    """A SyncGroup exchange whose answer's assignment names topic "t" `40_000 * scale` times, each
    time with one more partition."""
    n = 40_000 * scale
    entries = b"".join(struct.pack(">h", 1) + b"t" + struct.pack(">ii", 1, p) for p in range(n))
    assignment = struct.pack(">hi", 0, n) + entries + struct.pack(">i", -1)
    messages = exchange(11, 5, 1, "c", {"GroupId": "g", "MemberId": "", "GroupInstanceId": None,
                                        "ProtocolType": "consumer", "RebalanceTimeoutMs": 30000,
                                        "SessionTimeoutMs": 10000,
                                        "Protocols": [{"Name": "range", "Metadata": b""}]},
                        {"ThrottleTimeMs": 0, "ErrorCode": 0, "GenerationId": 1, "ProtocolName": "range",
                         "Leader": "m", "MemberId": "m", "Members": []})
    messages += exchange(14, 3, 2, "c", {"GroupId": "g", "GenerationId": 1, "MemberId": "m",
                                         "GroupInstanceId": None, "Assignments": []},
                         {"ThrottleTimeMs": 0, "ErrorCode": 0, "Assignment": assignment})
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        conn.exchange(messages)
        conn.close()


def unanswered_joins(path, scale: int = 1) -> None:
    """`3_000 * scale` connections of one client each making one Metadata exchange, then one client
    sending `300 * scale` JoinGroups of many groups that are never answered, and staying alive."""
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer, step_ns=1_000_000)
        for i in range(3_000 * scale):
            conn = traffic.connection(client_address(i))
            conn.exchange(_metadata_exchange(1, f"c{i}"))
        joiner = traffic.connection(client_address(10**6))
        for g in range(300 * scale):
            body = encode_body(11, "request", 5, {"GroupId": f"g{g}", "SessionTimeoutMs": 10000,
                                                  "RebalanceTimeoutMs": 1, "MemberId": "", "GroupInstanceId": None,
                                                  "ProtocolType": "consumer",
                                                  "Protocols": [{"Name": "range", "Metadata": b""}]})
            joiner.send(0, request_frame(11, 5, 10 + g, "joiner", body))
        traffic.ts += 60 * 10**9
        joiner.exchange(_metadata_exchange(5, "joiner"))


def excerpt_ranges(path, scale: int = 1) -> None:
    """One connection of `20_000 * scale` small exchanges, ApiVersions and Metadata in turn (`inspect
    --api ApiVersions -w` keeps every other one: ranges that do not merge)."""
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        for corr in range(1, 20_000 * scale + 1, 2):
            conn.exchange(exchange(18, 3, corr, "w", {"ClientSoftwareName": "a", "ClientSoftwareVersion": "1"},
                                   {"ErrorCode": 0, "ApiKeys": [], "ThrottleTimeMs": 0}))
            conn.exchange(_metadata_exchange(corr + 1, "w"))
        conn.close()


# ---- memory ------------------------------------------------------------------------------------


def many_names(path, scale: int = 1) -> None:
    """`n = 3_000 * scale` exchanges, each of its own client id, each to its own broker port, a
    ShareAcknowledge of its own share group; and one Fetch over n partitions."""
    n = 3_000 * scale
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        for i in range(n):
            conn = traffic.connection(client_address(i), (BROKER[0], 10_000 + i % 50_000))
            conn.exchange(_metadata_exchange(1, f"client-{i}"))
            conn.exchange(exchange(79, 1, 2, f"client-{i}",
                                   {"GroupId": f"share-{i}", "MemberId": "m", "ShareSessionEpoch": 1, "Topics": []},
                                   {"ThrottleTimeMs": 0, "ErrorCode": 0, "ErrorMessage": None, "Responses": [],
                                    "NodeEndpoints": []}))
        conn = traffic.connection(client_address(n + 1))
        fetch = {"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 1 << 20, "IsolationLevel": 0,
                 "SessionId": 0, "SessionEpoch": -1,
                 "Topics": [{"Topic": "t", "Partitions": [{"Partition": p, "CurrentLeaderEpoch": -1, "FetchOffset": 0,
                                                           "LogStartOffset": -1, "PartitionMaxBytes": 1024}
                                                          for p in range(n)]}],
                 "ForgottenTopicsData": [], "RackId": ""}
        answer = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0,
                  "Responses": [{"Topic": "t", "Partitions": [
                      {"PartitionIndex": p, "ErrorCode": 0, "HighWatermark": 10, "LastStableOffset": 10,
                       "LogStartOffset": 0, "AbortedTransactions": None, "PreferredReadReplica": -1,
                       "Records": None} for p in range(n)]}]}
        conn.exchange(exchange(1, 12, 1, "fetcher", fetch, answer))


def many_client_ids(path, n: int = 20_000) -> None:
    """One connection of `n` exchanges, each with a client id and a share group of its own (write it
    gzipped, `path` ending .gz: 200,000 of them are 8 MB)."""
    import gzip

    plain = Path(str(path) + ".tmp")
    with PcapWriter(str(plain), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        for i in range(n):
            conn.exchange(exchange(79, 1, i + 1, f"client-{i}",
                                   {"GroupId": f"share-{i}", "MemberId": "m", "ShareSessionEpoch": 1, "Topics": []},
                                   {"ThrottleTimeMs": 0, "ErrorCode": 0, "ErrorMessage": None, "Responses": [],
                                    "NodeEndpoints": []}))
        conn.close()
    with open(plain, "rb") as src, gzip.open(str(path), "wb", compresslevel=6) as out:
        while chunk := src.read(1 << 20):
            out.write(chunk)
    plain.unlink()


def big_metadata(path, scale: int = 1) -> None:
    """One Metadata answer naming `100_000 * scale` partitions of one topic."""
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        conn.exchange(_metadata_exchange(1, "meta", (("t", 100_000 * scale),)))
        conn.close()


def _key_line(i: int) -> bytes:
    return b"CLIENT_RANDOM %064x %096x\n" % (i, i)


def secrets_block(path, scale: int = 1, two_byte_lines: bool = False) -> None:
    """A pcapng: Decryption Secrets Blocks (24 MiB each at most) of `50_000 * scale` key log lines (or, with
    `two_byte_lines`, `6 MiB * scale` of "ab\\n"), then the plaintext Kafka of one exchange."""
    from tests.fuzz.conversation import conversation

    text = b"ab\n" * ((2 << 20) * scale) if two_byte_lines else b"".join(_key_line(i) for i in range(50_000 * scale))
    shb = _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    idb = _block(0x00000001, struct.pack("<HHI", 1, 0, 65535))
    dsbs = b""
    for start in range(0, len(text), 24 << 20):  # blocks under the 32 MiB a capture record may hold
        end = text.rfind(b"\n", start, start + (24 << 20)) + 1 if len(text) - start > 24 << 20 else len(text)
        end = end if end > start else len(text)
        piece = text[start:end]
        dsbs += _block(0x0000000A, struct.pack("<II", 0x544C534B, len(piece)) + piece + b"\0" * (-len(piece) % 4))
        if end >= len(text):
            break
    records = conversation(_metadata_exchange(1, "after-secrets"))
    epbs = [_block(0x00000006, struct.pack("<IIIII", 0, ts // 1000 >> 32, ts // 1000 & 0xFFFFFFFF, len(frame),
                                           len(frame)) + frame + b"\0" * (-len(frame) % 4))
            for ts, frame in records]
    Path(path).write_bytes(shb + idb + dsbs + b"".join(epbs))


def _block(kind: int, body: bytes) -> bytes:
    size = 12 + len(body)
    return struct.pack("<II", kind, size) + body + struct.pack("<I", size)


def short_key_lines(path, scale: int = 1) -> None:
    """A key log of `6 MiB * scale` of two-character lines (`path`.keys) beside a small plaintext capture."""
    Path(str(path) + ".keys").write_bytes(b"ab\n" * ((2 << 20) * scale))
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        conn.exchange(_metadata_exchange(1, "keys"))
        conn.close()


def client_hellos(path, scale: int = 1) -> None:
    """`5_000 * scale` connections that each send one TLS ClientHello and nothing more."""
    from tests.tls.build import client_hello, handshake, record

    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        for i in range(5_000 * scale):
            hello = record(22, handshake(1, client_hello(struct.pack(">Q", i) * 4, server_name=f"h{i}.test")))
            conn = traffic.connection(client_address(i))
            conn.send(0, hello)


# ---- times -------------------------------------------------------------------------------------


def far_future(path, seconds: int = 300_000_000_000) -> None:
    """The committed consumer-group recording moved to `seconds` after the epoch (past year 9999 from
    253,402,300,800 s on; past int64 nanoseconds from 9,223,372,037 s on), as a pcapng with
    microsecond times (a classic pcap holds 32-bit seconds)."""
    from kwire.capture.files import read_captures

    packets = list(read_captures([str(GROUP_CAPTURE)]))
    shift = seconds * 10**9 - packets[0].ts_ns
    Path(path).write_bytes(pcapng_us([((p.ts_ns + shift) // 1000, bytes(p.data)) for p in packets],
                                     packets[0].linktype))


def pcapng_us(records, linktype: int = 1) -> bytes:
    """A pcapng of (ts in microseconds, frame) records: one interface with if_tsresol 6 (a 64-bit count
    of nanoseconds cannot reach the year 9999; one of microseconds can)."""
    shb = _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    tsresol = struct.pack("<HHB", 9, 1, 6) + b"\0" * 3 + struct.pack("<HH", 0, 0)
    idb = _block(0x00000001, struct.pack("<HHI", linktype, 0, 65535) + tsresol)
    epbs = []
    for ts, frame in records:
        ts %= 1 << 64
        epbs.append(_block(0x00000006, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(frame), len(frame))
                           + frame + b"\0" * (-len(frame) % 4)))
    return shb + idb + b"".join(epbs)


# ---- wrong or cut without a word ---------------------------------------------------------------

FAKE_RECORDS = (b"\x17\x03\x03\x00\x10" + b"\xaa" * 16) * 3  # three application-data record headers, chained


def midstream_fake_tls(path, scale: int = 1, inside: bool = False) -> None:
    """A plaintext producer captured mid-stream (no handshake): `40 * scale` answered Produce
    exchanges whose record values hold bytes that chain as TLS records, the last one running past
    the value's end. `inside`: the capture begins inside the first request, just before the
    records that look like TLS (its first delivery is nothing but those and what follows them)."""
    value = b"v" * 40 + FAKE_RECORDS + b"\x17\x03\x03\x01\x00" + b"w" * 10
    batch = v2_batch([(b"k", value)])
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = MidStream(Traffic(writer), client_address(0))
        for corr in range(1, 40 * scale + 1):
            for direction, frame in produce_exchange(corr, [batch], client_id="fooled"):
                if inside and corr == 1 and direction == 0:
                    cut = frame.index(FAKE_RECORDS)
                    conn.skip(0, cut)
                    frame = frame[cut:]
                conn.send(direction, frame)


def big_first_request(path, size: int = 2 << 20, exchanges: int = 20, first: str = "produce",
                      handshake: bool = False) -> None:
    """A client captured mid-stream whose first exchange is larger than the detection window, then
    `exchanges` small Metadata exchanges. `first`: "produce" (a Produce request of `size` bytes of
    records), "fetch" (a Fetch answered with `size` bytes), "inside" (the capture begins inside such
    a Fetch answer: its first half not captured). `handshake`: the connection's SYNs were captured."""
    value = random.Random(7).randbytes(size)
    batch = v2_batch([(b"k", value)])
    if first == "produce":
        frames = produce_exchange(1, [batch], client_id="big")
    else:
        frames = exchange(1, 12, 1, "big", _FETCH, _fetch_answer(batch))
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        conn = traffic.connection(client_address(0)) if handshake else MidStream(traffic, client_address(0))
        for direction, frame in frames:
            if first == "inside" and direction == 1:
                conn.skip(1, len(frame) // 2)
                frame = frame[len(frame) // 2:]
            elif first == "inside":
                continue
            conn.send(direction, frame)
        for corr in range(2, exchanges + 2):
            for direction, frame in _metadata_exchange(corr, "big"):
                conn.send(direction, frame)


_FETCH = {"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 64 << 20, "IsolationLevel": 0,
          "SessionId": 0, "SessionEpoch": -1,
          "Topics": [{"Topic": "t", "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": 0,
                                                    "LogStartOffset": -1, "PartitionMaxBytes": 64 << 20}]}],
          "ForgottenTopicsData": [], "RackId": ""}


def _fetch_answer(batch: bytes) -> dict:
    return {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0,
            "Responses": [{"Topic": "t", "Partitions": [
                {"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 10, "LastStableOffset": 10,
                 "LogStartOffset": 0, "AbortedTransactions": None, "PreferredReadReplica": -1,
                 "Records": batch}]}]}
