"""The named reasons (kwire.reasons): net drops (kwire.net.drops), TCP closes (kwire.tcp.closes) and TLS "not
decrypted" (kwire.tls.reasons) are each one table. Held together here: docs/reasons.md's lists are made from the
tables; every place a layer counts, closes or gives up passes a registered name (read from the source, so a
literal or an undeclared name fails); and what runs over committed captures emit is registered, with the text
the table gives."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

import pytest

from kwire.native.kafka_pairing import CLOSE_REASONS
from kwire.native import net_decode as decode
from kwire.net.drops import DROP_NAMES, DROPS, SHORT
from kwire.outcomes import UNANSWERED_KINDS
from kwire.pipeline import RunSummary, analyze_files
from kwire.native import tcp_flows as flows
from kwire.tcp.closes import CLOSE_NAMES, CLOSED_COUNTERS, CLOSES
from kwire.tls.info import TlsInfo
from kwire.tls.reasons import NOT_DECRYPTED, UNSUPPORTED_CIPHER_SUITE
from tests.script_module import script_module

ROOT = Path(__file__).resolve().parents[1]
KWIRE = ROOT / "kwire"


def test_the_lists_are_generated():
    text = (ROOT / "docs" / "reasons.md").read_text(encoding="utf-8")
    assert script_module("gen_docs").render_reasons(text) == text, "docs/reasons.md: run python scripts/gen_docs.py"
    for name in [*DROPS, *CLOSES, *NOT_DECRYPTED]:
        assert f"- `{name}`: " in text, name


def _passed(module: str, calls: dict[str, int]) -> list[tuple[int, object]]:
    """(line, value) of the argument at position calls[f] of every call of f in the module's source: a name is
    looked up in the module, a literal is itself (an attribute, self.x, is left out)."""
    mod = importlib.import_module(module)
    path = KWIRE / (module.removeprefix("kwire.").replace(".", "/") + ".py")
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        at = calls.get(name)
        if at is None or len(node.args) <= at:
            continue
        arg = node.args[at]
        if isinstance(arg, ast.Constant):
            out.append((node.lineno, ("literal", arg.value)))
        elif isinstance(arg, ast.Name) and arg.id not in ("reason", "kind"):  # a parameter passed on
            out.append((node.lineno, getattr(mod, arg.id, ("undefined", arg.id))))
    return out


@pytest.mark.parametrize("module", ["kwire.native.net_layers", "kwire.native.net_tunnels", "kwire.native.net_decode"])
def test_every_drop_is_counted_under_a_registered_name(module):
    passed = _passed(module, {"reject": 1, "note": 1})
    assert passed or module == "kwire.native.net_decode"
    assert [(line, v) for line, v in passed if v not in DROPS] == []


def test_the_counters_are_the_drop_reasons():
    counts = [f.name for f in dataclasses.fields(decode.DecodeCounters) if f.type in ("int", int)]
    assert tuple(counts) == decode.COUNTS == DROP_NAMES


def test_the_closing_line_says_a_drop_in_the_tables_words():
    summary = RunSummary()
    summary.net = {SHORT: 3}
    assert f"3 {DROPS[SHORT].text}" in summary.line()


def test_every_close_is_a_registered_reason_and_names_what_is_unanswered():
    passed = _passed("kwire.native.tcp_flows", {"_close": 2})
    assert len(passed) >= 6 and [(line, v) for line, v in passed if v not in CLOSES] == []
    assert set(CLOSED_COUNTERS) <= set(flows.TABLE_COUNTERS)
    assert set(CLOSE_REASONS) == set(CLOSE_NAMES) and set(CLOSE_REASONS.values()) <= set(UNANSWERED_KINDS)


@pytest.mark.parametrize("module", ["kwire.tls.session", "kwire.tls.direction", "kwire.tls.info"])
def test_every_tls_reason_given_is_registered(module):
    passed = _passed(module, {"_give_up": 0, "_set_state": 1, "not_decrypted": 0})
    assert [(line, v) for line, v in passed if v not in NOT_DECRYPTED] == []


def test_a_reason_with_a_detail_says_it():
    info = TlsInfo()
    info.not_decrypted(UNSUPPORTED_CIPHER_SUITE, "TLS_AES_128_CCM_SHA256")
    info.not_decrypted("no_key")  # the first stands
    assert info.reason_kind == UNSUPPORTED_CIPHER_SUITE
    assert info.reason == "unsupported cipher suite TLS_AES_128_CCM_SHA256"


_CAPTURES = ["captures/tls/py-tls12-aes256gcm.pcap", "captures/tls/node-tls13-aes128gcm-resumed.pcap",
             "captures/kcat-snappy.pcap", "captures/problems/proxy-faults.pcap.gz"]


@pytest.mark.parametrize("capture", _CAPTURES)
def test_what_a_run_emits_is_registered(capture):
    """Without a key log: every TLS connection is named by a registered reason, its text the table's; every drop
    counted and every TCP close is a registered name, and the closes add up to the connections."""
    summary = RunSummary()
    for _ in analyze_files([str(ROOT / capture)], summary=summary):
        pass
    for row in summary.tls.rows:
        assert row["reason_kind"] in NOT_DECRYPTED and row["reason"] == NOT_DECRYPTED[row["reason_kind"]].say()
    if "/tls/" in capture:  # no key log was given: the handshakes captured say so
        assert "no_keylog" in {row["reason_kind"] for row in summary.tls.rows}
    assert {k for k in summary.net if ":" not in k} <= set(DROP_NAMES)
    closed = {k: v for k, v in summary.tcp.items() if k.startswith("closed_")}
    assert set(closed) == set(CLOSED_COUNTERS) and sum(closed.values()) == summary.tcp["connections"] > 0
