"""What the pure-Python build pickles the compiled build loads, and back (kwire.fields): a Spark cluster's
executors run the .py files the job ships them, the driver its compiled modules, and Aggregators (with all
they hold) and run summaries travel between them. Where no compiled core is installed both
sides are pure and this checks the pure round trip."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.analytics.aggregate import Aggregator
from kwire.fields import field_names, fields_state
from kwire.live.metrics_state import MeteredAggregator
from kwire.pipeline import RunSummary, analyze_files

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ["captures/produce-consume-zstd.pcap", "captures/multi-broker-3.pcap", "captures/share-consumer.pcap"]

# Made in another process, with the build given by KWIRE_PURE: the pickled Aggregator, MeteredAggregator,
# RunSummary of CAPTURES, and the Aggregators' documents.
_MAKE = """
import pickle, sys
from kwire.analytics.aggregate import Aggregator
from kwire.live.metrics_state import MeteredAggregator
from kwire.pipeline import RunSummary, analyze_files
summary = RunSummary()
exchanges = list(analyze_files(sys.argv[2:], summary=summary))
made = []
for cls in (Aggregator, MeteredAggregator):
    agg = cls()
    for ex in exchanges:
        agg.add_exchange(ex)
    made.append(agg)
with open(sys.argv[1], "wb") as f:
    pickle.dump((made, summary, [agg.document() for agg in made]), f)
"""


def _made_by(build_pure: bool, out: Path) -> tuple:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "KWIRE_PURE": "1" if build_pure else ""}
    done = subprocess.run([sys.executable, "-c", _MAKE, str(out), *CAPTURES], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out, "rb") as f:
        return pickle.load(f)


@pytest.mark.parametrize("pure", [True, False], ids=["made pure", "made compiled"])
def test_the_other_build_loads_what_one_pickles(pure, tmp_path):
    aggregators, summary, documents = _made_by(pure, tmp_path / "made.pickle")
    assert [agg.document() for agg in aggregators] == documents
    assert type(aggregators[1]) is MeteredAggregator and aggregators[1].metrics is not None
    # loaded here, merged here, and written again: the same figures as made here from the captures
    mine_summary = RunSummary()
    mine = list(analyze_files(CAPTURES, summary=mine_summary))
    here = Aggregator()
    for ex in mine:
        here.add_exchange(ex)
    assert here.document() == documents[0]
    merged = Aggregator().merge(aggregators[0])
    assert merged.document() == documents[0]
    again = pickle.loads(pickle.dumps(aggregators[0]))
    assert again.document() == documents[0]
    theirs, ours = fields_state(summary), fields_state(mine_summary)
    assert theirs.pop("tls").__dict__ == ours.pop("tls").__dict__ and theirs == ours
    assert summary.line() == mine_summary.line()


def test_every_field_is_in_the_state():
    agg = Aggregator()
    state = fields_state(agg)
    assert set(state) == set(field_names(Aggregator)) and "analysis" in state
    metered = MeteredAggregator()
    assert "metrics" in fields_state(metered)
