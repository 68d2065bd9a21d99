"""Finding kinds are registered once (kwire.analytics.finding_kinds): docs/findings.md's list is made from the
registry, the keys each kind declares are the keys its section documents, and every kind the finders emit on the
committed recordings is registered, with the keys it declares."""

from __future__ import annotations

from kwire.analytics.finding_kinds import EPISODES, KINDS
from kwire.live import findings_log
from tests import problems as P
from tests.docs.pages import DOCS, all_documented_keys
from tests.script_module import script_module


def test_the_list_of_kinds_is_generated():
    text = (DOCS / "findings.md").read_text(encoding="utf-8")
    assert script_module("gen_docs").render_kinds(text) == text, "docs/findings.md's kinds: run python scripts/gen_docs.py"


def test_each_kind_declares_the_keys_its_section_documents():
    documented = all_documented_keys()
    for kind in KINDS.values():
        assert set(kind.keys) == documented[f"finding.{kind.name}"], kind.name


def test_the_findings_log_names_episodes_by_the_registry():
    assert findings_log.EPISODES is EPISODES and EPISODES == {"slow_broker", "transaction_stall"}


def test_every_finding_emitted_is_registered():
    common = {"kind", "severity", "summary", "start_ts_ns", "end_ts_ns", "evidence", "start", "end"}
    for name in ("txn-abort", "txn-stall", "proxy-faults", "error-burst", "member-expired", "clean-classic"):
        for f in P.document(name)["findings"]:
            kind = KINDS[f["kind"]]
            assert set(f) - common <= set(kind.keys), (name, f["kind"], set(f) - common - set(kind.keys))
