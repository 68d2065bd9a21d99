"""Test-only: control characters from the wire in every string of every api and version (issue 49).

Every string field of every (api, version) kwire has schemas for holds its name followed by every C0
control (U+0000-U+001F and DEL), every C1 control (U+0080-U+009F), every bidirectional control Trojan
Source names (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) and the other invisible or
reordering characters (`INVISIBLE`: line and paragraph separators, zero-width ones, the BOM, a soft
hyphen, an interlinear annotation, a tag), in an order drawn from the seed and the string's base (so
`HostileFiller(seed).hostile("group-a")` is the generator's group id): client ids, topic names,
group ids, member ids, config names and values, hosts, error messages, the topics of the consumer-protocol
messages. Record sets hold a record whose key, value, header key and header value carry them too. Bodies
are tests/hostile3/nulls.py's populated ones (entities keep one name across apis: a topic is the same
topic in Metadata, Produce and Fetch), one exchange per (api, version), one connection per api.

`write_capture(path, seed, scale)` writes the pcap (`scale` rounds, each its own connections; scale 1: 368
exchanges, 1.2 MB; under 20 MB up to scale 17) and returns the number of exchanges. `RAW` is every character that must never leave
kwire unescaped; `raw_in(text)` lists those a text holds.
"""

from __future__ import annotations

import random

from kwire.capture.pcapwrite import PcapWriter
from kwire.codec.schemas import all_schemas
from tests.campaign.traffic import ETHERNET, Traffic, client_address
from tests.codec.test_records_encoder import v2_batch
from tests.hostile3.nulls import Filler, frames, populated

C0 = "".join(map(chr, range(0x20))) + "\x7f"
C1 = "".join(map(chr, range(0x80, 0xA0)))
BIDI = "\u061c\u200e\u200f" + "".join(map(chr, range(0x202A, 0x202F))) + "".join(map(chr, range(0x2066, 0x206A)))
INVISIBLE = "\u2028\u2029\u200b\u200c\u200d\u2060\ufeff\u00ad\ufff9\U000e0001"
RAW = C0 + C1 + BIDI + INVISIBLE
ALLOWED = frozenset("\n")  # what an output may hold of RAW: its own line breaks


def raw_in(text: str) -> list[str]:
    """The characters of RAW in `text` (but its line breaks), each once."""
    return sorted(set(text).intersection(RAW) - ALLOWED)


class HostileFiller(Filler):
    """Strings: the plain filler's, each followed by RAW in an order drawn from the seed and the
    string; a record whose key, value and header carry RAW."""

    def __init__(self, seed: int):
        self.seed = seed
        self.made: dict[str, str] = {}
        key, value = self.hostile("key").encode(), self.hostile("value").encode()
        header = (self.hostile("header").encode(), self.hostile("header-value").encode())
        self.batch = v2_batch([(key, value, [header])], base_ts=1_795_305_690_000)

    def hostile(self, base: str) -> str:
        text = self.made.get(base)
        if text is None:
            chars = list(RAW)
            random.Random(f"{self.seed}:{base}").shuffle(chars)
            text = self.made[base] = base + "".join(chars)
        return text

    def string(self, f, i: int) -> str:
        plain = super().string(f, i)
        return plain if plain == "consumer" else self.hostile(plain)  # a protocol type stays one kwire knows


def control_exchanges(seed: int = 49):
    """(api key, version, request frame, response frame) for every (api, version), api by api."""
    fill = HostileFiller(seed)
    schemas = all_schemas()
    for api_key in sorted({key for key, _ in schemas}):
        request_schema, response_schema = schemas.get((api_key, "request")), schemas.get((api_key, "response"))
        if request_schema is None or response_schema is None:
            continue
        v = request_schema.valid
        client_id = fill.hostile(f"client-{api_key}")
        for corr, version in enumerate(range(v.lo, v.hi + 1), start=1):
            request = populated(request_schema, version, fill=fill)
            response = populated(response_schema, version, fill=fill)
            yield (api_key, version) + frames(api_key, version, corr, request, response, client_id)


def write_capture(path, seed: int = 49, scale: int = 1) -> int:
    written = 0
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        conn, at = None, None
        for round_ in range(scale):
            for api_key, _version, request, response in control_exchanges(seed + round_):
                if at != (round_, api_key):
                    if conn is not None:
                        conn.close()
                    conn, at = traffic.connection(client_address(round_ * 1000 + api_key)), (round_, api_key)
                conn.exchange([(0, request), (1, response)])
                written += 1
        if conn is not None:
            conn.close()
    return written
