"""Test-only: a capture of one connection whose every Metadata exchange names a new client id (a
label flood), written packet by packet with kwire's pcap writer (tests/campaign/traffic)."""

from __future__ import annotations

from kwire.capture.pcapwrite import PcapWriter
from tests.campaign.traffic import ETHERNET, Traffic, _metadata, client_address


def client_id_flood(path, n: int) -> None:
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        conn = traffic.connection(client_address(0))
        for i in range(n):
            conn.exchange(_metadata(i + 1, f"flood-{i}"))
        conn.close()
