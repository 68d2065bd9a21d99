"""Issue 25, wrong or cut without a word: -w over an input, stdin read twice, findings cut with no
count, plaintext Kafka taken for TLS, a connection past the detection window, a partly decrypted
TLS connection reported as having no record. Each fails on the code before the fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile import generators

ROOT = Path(__file__).resolve().parents[2]
GROUP = ROOT / "captures" / "consumer-protocol-lz4.pcap"
GROUP_ID = "kwire-group-produce-consume-lz4"


def _kwire(*args, data: bytes | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kwire", *args], capture_output=True, input=data, timeout=300,
                          env=env)


def _summary(stderr: bytes) -> str:
    return [line for line in stderr.decode().splitlines() if " exchanges (" in line][-1]


@pytest.mark.parametrize("option", ["-w", "--html"])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(tmp_path, option):
    capture = tmp_path / "c.pcap"
    capture.write_bytes(GROUP.read_bytes())
    (tmp_path / "link.pcap").symlink_to(capture)
    command = "inspect" if option == "-w" else "stats"
    for out in (capture, tmp_path / "link.pcap"):
        run = _kwire(command, option, str(out), str(capture))
        assert run.returncode == 2 and b"is an input" in run.stderr
    assert capture.read_bytes() == GROUP.read_bytes()


@pytest.mark.parametrize("args", [["--group", GROUP_ID], ["--since", "0.05s"], ["--until", "0.1s"]])
@pytest.mark.parametrize("command", [["inspect"], ["stats", "--json"]])
def test_stdin_gives_what_the_file_gives(args, command):
    from_file = _kwire(*command, *args, str(GROUP))
    from_stdin = _kwire(*command, *args, "-", data=GROUP.read_bytes())
    assert from_file.returncode == from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout and from_file.stdout
    assert _summary(from_stdin.stderr) == _summary(from_file.stderr)


def test_findings_past_the_list_cap_are_counted_and_said(tmp_path):
    """300 JoinGroups held past their rebalance timeout: 300 findings, the document keeps 200."""
    path = tmp_path / "joins.pcap"
    generators.unanswered_joins(path)
    document = json.loads(_kwire("stats", "--json", str(path)).stdout)
    assert len(document["findings"]) == 200 and document["findings_total"] >= 300
    table = _kwire("stats", str(path)).stdout.decode()
    assert f"{document['findings_total'] - 30:,} more findings" in table and "not listed" in table


@pytest.mark.parametrize("inside", [False, True])
@pytest.mark.parametrize("port", [[], ["--port", "9092"]])
def test_mid_stream_plaintext_kafka_is_not_taken_for_tls(tmp_path, inside, port):
    """Record values that hold bytes chaining as TLS records, in the first segment captured."""
    path = tmp_path / "fake.pcap"
    generators.midstream_fake_tls(path, inside=inside)
    run = _kwire("inspect", "--json", *port, str(path))
    assert len(run.stdout.splitlines()) == (39 if inside else 40), run.stderr
    assert b"TLS" not in run.stderr


def test_a_first_request_past_the_detection_window_is_recognised(tmp_path):
    """A 2 MiB Produce first, after a captured handshake: the connection was ignored half-way."""
    path = tmp_path / "big.pcap"
    generators.big_first_request(path, handshake=True)
    run = _kwire("inspect", "--json", str(path))
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(lines) == 21 and lines[0]["api"] == "Produce"


def test_a_partly_decrypted_connection_says_so(tmp_path):
    """A decrypted TLS 1.3 connection, then a gap and records that verify under no key: it was
    reported as 'no encrypted record captured'."""
    path = tmp_path / "gap.pcap"
    generators.tls_gap_garbage(path)
    run = _kwire("stats", "--json", "--keylog", str(path) + ".keys", str(path))
    tls = json.loads(run.stdout)["tls"]
    partly = [row for row in tls["list"] if row["records_decrypted"] and not row["decrypted"]]
    assert partly and all("no encrypted record" not in row["reason"] for row in partly)
    assert tls["partly_decrypted"] == len(partly)


def test_hostile_inputs_on_stdin_give_what_the_file_gives(tmp_path):
    path = tmp_path / "fake.pcap"
    generators.midstream_fake_tls(path)
    digests = {hashlib.sha256(_kwire("stats", "--json", source, data=data).stdout).hexdigest()
               for source, data in ((str(path), None), ("-", path.read_bytes()))}
    assert len(digests) == 1
