"""A network namespace with a veth pair, for the tests that capture live traffic (the ring, `kwire live
--json`): both ends up, GRO off (so segments arrive as sent), removed at the end."""

from __future__ import annotations

import contextlib
import subprocess


def in_namespace(ns: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


@contextlib.contextmanager
def veth_namespace(ns: str, tx: str, rx: str):
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", tx, "type", "veth", "peer", "name", rx], check=True,
                       capture_output=True)
        for dev in (tx, rx):
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True, capture_output=True)
            subprocess.run(in_namespace(ns, "ethtool", "-K", dev, "gro", "off"), capture_output=True)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
