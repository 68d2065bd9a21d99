"""The standing hostile-input campaign (issue 12): seeded cases from tests/campaign/cases.py, each run
as `python -m kwire ...` in a process of its own under an address-space and CPU-time limit
(tests/campaign/runner.py): mutated committed captures in the three container formats, the crafted
Kafka cases (bombs, big values, a record with 500,000 headers, 50,000 empty batches, 2^31-element
arrays, random bodies, escapes, absurd times, SASL secrets, a reused correlation id, ...) and TCP
floods (10,000 SYN-only connections, an acks=0 producer flood). Every run must end with exit status
0 or 1, no traceback, only one-line `kwire: ...` messages on stderr, and whole JSON lines.

scripts/campaign.py runs the same cases longer, with more seeds and bigger sizes (docs/bounds.md).
"""

from __future__ import annotations

from functools import cache

import pytest

from tests.campaign import runner
from tests.campaign.cases import CRAFTED, FLOODS, HOSTILE, Case, cases, crafted

SEED = 1212
COUNT = 64  # every crafted case and flood, the rest mutations


@cache
def _cases() -> list[Case]:
    return cases(SEED, COUNT)


def test_the_campaign_covers_every_family_and_container():
    made = _cases()
    assert len(made) == COUNT and len({c.name for c in made if c.family != "mutated"}) == \
        len(CRAFTED) + len(FLOODS) + len(HOSTILE)
    assert {c.suffix for c in made if c.family == "mutated"} == {".pcap", ".pcapng", ".pcap.gz"}
    again = cases(SEED, COUNT)
    assert [c.name for c in again] == [c.name for c in made] and [c.argv for c in again] == [c.argv for c in made]


@pytest.mark.parametrize("index", range(COUNT))
def test_hostile_case(index, tmp_path):
    case = _cases()[index]
    result = runner.run_case(case, tmp_path)
    assert not result.problems, f"{case.name} ({' '.join(result.argv)}): {result.problems}"


def test_the_runner_sees_what_it_guards(tmp_path, monkeypatch):
    """The checks can fail: a traceback, a stray line, exit 1 without an error line, bad JSON, a
    signal; and the memory limit is real (a --records run in 40 MB of address space stops, in one line)."""
    check = runner.check
    assert check(("inspect",), 1, b"", "Traceback (most recent call last):\n  ...\nValueError: x\n")
    assert check(("inspect",), 0, b"", "kwire: 1 packets\nsomething else\n")
    assert check(("inspect",), 1, b"", "kwire: 3 packets\n")
    assert check(("inspect", "--json"), 0, b'{"a": 1}\n{"cut', "kwire: 1 packets\n")
    assert check(("stats",), -9, b"", "")
    assert not check(("inspect", "--json"), 0, b'{"a": 1}\n', "kwire: 1 packets\n")
    monkeypatch.setattr(runner, "MEMORY_LIMIT", 40 << 20)
    import random

    case = crafted(random.Random(1), "big-values", 1)._replace(argv=("inspect", "--json", "--records"))
    capped = runner.run_case(case, tmp_path)
    assert capped.status == 1 and not capped.problems
    monkeypatch.setattr(runner, "MEMORY_LIMIT", 1 << 30)
    assert runner.run_case(case, tmp_path).status == 0


@pytest.mark.parametrize("limit_mb", [300, 450, 550])
def test_a_memory_cap_ends_in_one_line_not_a_crash(limit_mb, tmp_path, monkeypatch):
    """The issue's case: --json --records of big values under an address-space cap once ended in a
    SIGSEGV inside orjson. Under any cap: the lines, or `kwire: error: out of memory`."""
    from tests.campaign.cases import _produce_pcap
    from tests.codec.test_records_encoder import ZSTD, v2_batch

    batch = v2_batch([(b"k", b"\x01" * ((48 << 20) - 100))], codec=ZSTD)  # 48 MiB of control characters
    case = Case("big-control-values", "crafted", ".pcap", ("inspect", "--json", "--records", "-j", "0"),
                lambda path: path.write_bytes(_produce_pcap([[batch] * 2])))
    monkeypatch.setattr(runner, "MEMORY_LIMIT", limit_mb << 20)
    result = runner.run_case(case, tmp_path)
    assert not result.problems and result.status in (0, 1), result
