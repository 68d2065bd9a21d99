"""scripts/record_admin.py and its truth files: every client and broker pair is recorded, each truth
file's header says what made it, every operation line has the form scripts/admin_truth.py writes, and
`jsonable` turns what client libraries return into JSON (enums by name, bytes as hex, objects by their
public attributes)."""

from __future__ import annotations

import enum
import importlib.util
import json
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
ADMIN = SCRIPTS.parent / "captures" / "admin"
sys.path.insert(0, str(SCRIPTS))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return sys.modules[name]


ra = _load("record_admin")
at = _load("admin_truth")


def test_every_client_and_broker_pair_is_recorded_with_its_truth():
    recorded = {p.name for p in ADMIN.glob("*.pcap")}
    assert recorded == {f"{c}-{b}.pcap" for c, b in ra.PAIRS}
    assert {c for c, _ in ra.PAIRS} == set(ra.CLIENTS) and {b for _, b in ra.PAIRS} == set(ra.BROKERS)
    for name in recorded:
        lines = (ADMIN / f"{name}.truth.jsonl").read_text().splitlines()
        header = json.loads(lines[0])["recording"]
        assert f"{header['client']}-{header['broker']}.pcap" == name
        assert "tansu" in header and "librdkafka_mock" in header
        for line in lines[1:]:
            op = json.loads(line)
            assert {"ts", "client", "operation", "arguments"} <= op.keys(), line
            assert ("result" in op) != ("error" in op), line


def test_captures_stay_small():
    assert all(p.stat().st_size < 300_000 for p in ADMIN.glob("*.pcap"))


class _Colour(enum.Enum):
    RED = 1


class _Thing:
    __slots__ = ("name", "colour", "_hidden")

    def __init__(self):
        self.name, self.colour, self._hidden = "t", _Colour.RED, 1


def test_jsonable():
    value = {_Colour.RED: [b"\x01\xff", {"k": _Thing()}, {2, 1}], 3: ValueError("bad")}
    assert at.jsonable(value) == {"RED": ["01ff", {"k": {"type": "_Thing", "name": "t", "colour": "RED"}}, [1, 2]],
                                  "3": "ValueError: bad"}
