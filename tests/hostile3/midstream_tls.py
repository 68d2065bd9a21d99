"""Test-only: plaintext Kafka captured mid-stream whose first bytes chain as TLS records (issue 49).

The capture begins inside a frame whose end holds bytes that read as TLS application-data records
(0x17 0x03 0x03, a length, that many bytes, the next header), the last one ending exactly where the
first real Kafka frame begins: the client's side begins inside an acks=0 Produce request (never
answered) whose record value holds them, the broker's inside a Fetch answer to a request sent before the
capture began (its bytes come first). Then `20 * scale` ordinary exchanges (Metadata and Produce, correlation
ids 1 on), all answered. Read from the start, each direction is a chain of plausible records for a while, then
Kafka.

`write_capture(path, records, side, packed, keylog, scale, seed)`:
- `records`: how many records the prefix chains (1 or more);
- `side`: "client", "broker" or "both": which directions begin with such a prefix;
- `packed`: the prefix shares segments with the frames after it (a sender writing its bytes as one
  stream), else it ends a segment of its own (a frame written on its own);
- `keylog`: also write `<path>.keys`, an NSS key log with a line for a connection not captured;
- `mss`: the largest segment (1: every byte a segment of its own, for the tests that count work).
Returns the number of exchanges that should pair. VARIANTS lists the combinations the tests run.

`tls_windows(path, connections)`: what the fix costs, for docs/bounds.md: that many TLS connections captured
mid-stream (records of random bytes, no handshake), their segments interleaved, each held undecided until its
detection window (kwire.tls.detect.DECIDE_BYTES) is full. Returns the bytes of records each sends.
"""

from __future__ import annotations

import random
import struct
from itertools import product

from kwire.capture.pcapwrite import PcapWriter
from tests.campaign.traffic import BROKER, ETHERNET, Traffic, client_address
from tests.codec.test_records_encoder import v2_batch
from tests.fuzz.conversation import ACK, PSH
from tests.render.hostile import exchange, produce_exchange

SIDES = ("client", "broker", "both")
RECORD_COUNTS = (1, 2, 6)
VARIANTS = [(n, side, packed) for n, side, packed in product(RECORD_COUNTS, SIDES, (False, True))]
MSS = 1448
_FETCH = {"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 1 << 20, "IsolationLevel": 0,
          "SessionId": 0, "SessionEpoch": -1,
          "Topics": [{"Topic": "t", "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": 0,
                                                    "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20}]}],
          "ForgottenTopicsData": [], "RackId": ""}


def _records(rng: random.Random, n: int, extra: int) -> bytes:
    """n chained application-data records of random bodies; the last declares `extra` bytes more
    than it holds (the bytes of the frame after the record value, which it thus covers)."""
    out = []
    for i in range(n):
        # the first longer than a segment: the second header comes in a later segment than the first
        body = rng.randbytes(rng.randrange(MSS + 100, 2400) if i == 0 else rng.randrange(600, 2400))
        length = len(body) + (extra if i == n - 1 else 0)
        out.append(b"\x17\x03\x03" + struct.pack(">H", length) + body)
    return b"".join(out)


def _tail(rng: random.Random, n: int, frame_of) -> bytes:
    """The end of the frame `frame_of(value)` makes, from its first record header on: its record
    value ends with n records, the last running exactly to the frame's end."""
    state = rng.getstate()
    probe = frame_of(_records(rng, n, 0))
    rng.setstate(state)
    records = _records(rng, n, 0)
    extra = len(probe) - probe.rindex(records) - len(records)
    rng.setstate(state)
    records = _records(rng, n, extra)
    frame = frame_of(records)
    return frame[frame.rindex(records):]


def _produce_acks0(value: bytes) -> bytes:
    return produce_exchange(0, [v2_batch([(b"k", value)])], client_id="midtls", acks=0)[0][1]


def _fetch_answer(value: bytes) -> bytes:
    answer = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0,
              "Responses": [{"Topic": "t", "Partitions": [
                  {"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 10, "LastStableOffset": 10,
                   "LogStartOffset": 0, "AbortedTransactions": None, "PreferredReadReplica": -1,
                   "Records": v2_batch([(b"k", value)])}]}]}
    return exchange(1, 12, 0, "midtls", _FETCH, answer)[1][1]


def _exchanges(rng: random.Random, count: int):
    for corr in range(1, count + 1):
        if corr % 2:
            yield exchange(3, 9, corr, "midtls", {"Topics": [{"Name": "t"}]},
                           {"Brokers": [{"NodeId": 1, "Host": "broker", "Port": 9092}],
                            "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0}]}]})
        else:
            yield produce_exchange(corr, [v2_batch([(b"k", rng.randbytes(rng.randrange(10, 3000)))])],
                                   client_id="midtls")


class _Sender:
    """One connection whose handshake was not captured; each direction's bytes cut into segments."""

    def __init__(self, traffic: Traffic, client, mss: int = MSS):
        self.traffic = traffic
        self.ends = (client, BROKER)
        self.seq = [1000, 500_000]
        self.mss = mss

    def send(self, direction: int, data: bytes) -> None:
        src, dst = self.ends[direction], self.ends[1 - direction]
        for i in range(0, len(data), self.mss):
            piece = data[i:i + self.mss]
            self.traffic.packet(src, dst, self.seq[direction], self.seq[1 - direction], ACK | PSH, piece)
            self.seq[direction] += len(piece)
        self.traffic.packet(dst, src, self.seq[1 - direction], self.seq[direction], ACK)


def write_capture(path, records: int = 2, side: str = "client", packed: bool = False, keylog: bool = False,
                  scale: int = 1, seed: int = 49, mss: int = MSS) -> int:
    assert records >= 1 and side in SIDES
    rng = random.Random(seed * 1000 + records)
    prefixes = [b"", b""]
    if side in ("client", "both"):
        prefixes[0] = _tail(rng, records, _produce_acks0)
    if side in ("broker", "both"):
        prefixes[1] = _tail(rng, records, _fetch_answer)
    count = 20 * scale
    with PcapWriter(str(path), ETHERNET) as writer:
        sender = _Sender(Traffic(writer), client_address(0), mss)
        # The broker's answer is under way when the capture begins: its prefix comes first (packed, all
        # but its last segment: the rest goes out with the answer to the first request).
        lead = len(prefixes[1]) if not packed else len(prefixes[1]) // MSS * MSS
        if lead:
            sender.send(1, prefixes[1][:lead])
        prefixes[1] = prefixes[1][lead:]
        for corr, frames in enumerate(_exchanges(rng, count), 1):
            for direction, frame in frames:
                prefix = prefixes[direction] if corr == 1 else b""
                if prefix and not packed:
                    sender.send(direction, prefix)
                    prefix = b""
                sender.send(direction, prefix + frame)
    if keylog:
        with open(str(path) + ".keys", "wb") as keys:
            keys.write(b"# a key log for another connection\nCLIENT_RANDOM %064x %096x\n"
                       % (rng.getrandbits(256), rng.getrandbits(384)))
    return count


def tls_windows(path, connections: int = 100, seed: int = 49) -> int:
    from kwire.tls.detect import DECIDE_BYTES

    rng = random.Random(seed)
    total = DECIDE_BYTES + 2 * MSS
    streams = []
    for _ in range(connections):
        records = b"".join(b"\x17\x03\x03" + struct.pack(">H", 16384 + 17) + rng.randbytes(16384 + 17)
                           for _ in range(total // 16384 + 2))
        streams.append(records[rng.randrange(16384):][:total])  # begun inside a record
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        senders = [_Sender(traffic, client_address(c)) for c in range(connections)]
        for at in range(0, total, MSS):
            for sender, stream in zip(senders, streams):
                sender.send(1, stream[at:at + MSS])
    return total
