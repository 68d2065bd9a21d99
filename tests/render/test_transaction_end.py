"""An EndTxn's line says whether it commits or aborts, and which transaction (issue 48: it said neither): on the
real transactional producer's recording (librdkafka, captures/problems/txn-clean) and on a commit and an abort
written from the schemas."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kwire.cli.main import cli
from tests.fuzz.conversation import conversation_pcap
from tests.render.hostile import exchange

ROOT = Path(__file__).resolve().parents[2]


def _lines(path) -> list[str]:
    result = CliRunner().invoke(cli, ["inspect", "--api", "EndTxn", "--no-summary", str(path)],
                                env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.stderr
    return result.stdout.splitlines()


def test_a_real_commit_says_so_with_its_transaction():
    lines = _lines(ROOT / "captures" / "problems" / "txn-clean.pcap.gz")
    assert len(lines) == 8 and all(line.endswith("commit txn kwire-ledger-writer") for line in lines)


def test_a_commit_and_an_abort(tmp_path):
    messages = []
    for corr, committed in ((1, True), (2, False)):
        messages += exchange(26, 3, corr, "tx-app", {"TransactionalId": "orders-tx", "ProducerId": 7,
                                                     "ProducerEpoch": 0, "Committed": committed},
                             {"ThrottleTimeMs": 0, "ErrorCode": 0})
    path = tmp_path / "txn.pcap"
    path.write_bytes(conversation_pcap(messages, start_ns=1_795_305_690 * 10**9))
    lines = _lines(path)
    assert [line.rsplit("  ", 1)[-1] for line in lines] == ["commit txn orders-tx", "abort txn orders-tx"]
