#!/usr/bin/env python3
"""Decode throughput of kwire's compiled decoders on real captures.

Collects every request and response body of the paired exchanges in the given captures (the
frames as the wire carried them), then times decoding them all, several rounds, in CPU time:
bodies/s, exchanges/s and MB/s. Records stay lazy (batch summaries are a renderer's business), as
in `kwire inspect` without --records; `--records` also summarises every record batch. `--build`
times what the pipeline does per exchange instead: kwire.native.exchange_build.build_from_parts (both bodies
decoded and the Exchange made), on every exchange.

    python scripts/bench_decode.py captures/*.pcap /tmp/many-small.pcap [--rounds 5] [--records | --build]
"""

from __future__ import annotations

import argparse
import time

from kwire.codec.compiler import decoder_for
from kwire.native.codec_records import summarize_records
from kwire.codec.schemas import schema_for
from kwire.codec.values import RawRecords
from kwire.native.exchange_build import build_from_parts, exchange_parts
from kwire.native.kafka_headers import parse_response_header
from kwire.native.kafka_pairing import PAIRED
from kwire.pipeline import analyze_files


def bodies(paths):
    raws = list(analyze_files(paths, decode=False, offload=lambda raw: True))  # paired frames, undecoded
    out = []
    for raw in raws:
        if raw.status != PAIRED:
            continue
        h = raw.request.header
        for kind, body, pos in (("request", raw.request.body, h.header_size),
                                ("response", raw.response_body,
                                 parse_response_header(raw.response_body, h.api_key, h.api_version).header_size)):
            schema = schema_for(h.api_key, kind)
            if schema is not None and h.api_version in schema.valid:
                out.append((decoder_for(schema, h.api_version), bytes(body), pos))
    return out


def build_all(paths, rounds: int) -> None:
    parts = [exchange_parts(raw, owned=True) for raw in analyze_files(paths, decode=False, offload=lambda raw: True)]
    best = None
    for _ in range(rounds):
        start = time.process_time()
        for item in parts:
            build_from_parts(item)
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    print(f"{len(parts)} exchanges built; best of {rounds} rounds, CPU time: {best:.3f} s = "
          f"{len(parts) / best:,.0f} exchanges/s")


def summarise_all(value):
    if isinstance(value, RawRecords):
        summarize_records(value.data)
    elif isinstance(value, dict):
        for v in value.values():
            summarise_all(v)
    elif isinstance(value, list):
        for v in value:
            summarise_all(v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("captures", nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--records", action="store_true", help="also summarise every record batch")
    parser.add_argument("--build", action="store_true", help="time build_from_parts on every exchange instead")
    args = parser.parse_args()
    if args.build:
        build_all(args.captures, args.rounds)
        return
    items = bodies(args.captures)
    size = sum(len(b) - p for _, b, p in items)
    best = None
    for _ in range(args.rounds):
        start = time.process_time()
        for decode, body, pos in items:
            decoded, _ = decode(body, pos)
            if args.records:
                summarise_all(decoded)
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    print(f"{len(items)} bodies ({len(items) // 2} exchanges), {size / 1e6:.2f} MB of bodies; best of {args.rounds} "
          f"rounds, CPU time: {best:.3f} s = {len(items) / best:,.0f} bodies/s, {len(items) / 2 / best:,.0f} "
          f"exchanges/s, {size / best / 1e6:.1f} MB/s")


if __name__ == "__main__":
    main()
