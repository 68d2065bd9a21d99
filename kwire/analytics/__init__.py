"""Analytics shared by `kwire stats`, `kwire spark` and `kwire live`: one definition of each figure.

- kwire.native.exchange_facts: Exchange -> flat rows (exchange_row, partition_rows, topic_names);
  kwire.native.exchange_row: the rows' type (ExchangeRow, PartitionRow: fields, and a Mapping of their names).
- kwire.analytics.read: Exchange -> (row, partition rows, topic names, observations), each body read
  once for all of them (read_exchange: what stats, live and spark feed an Aggregator);
  kwire.native.exchange_produce: a Produce's partitions, batches and answer, read once.
- kwire.native.distribution: exact latency distributions, nearest-rank percentiles, histograms.
- kwire.native.series: mergeable time series with self-coarsening resolution.
- kwire.analytics.aggregate: the mergeable Aggregator and its `document()` (the stats JSON).
- kwire.native.exchange_kinds: waits (long polls answered empty) and version negotiation.
- kwire.analytics.observe, observe_groups, resends: Exchange -> observations for groups and findings.
- kwire.analytics.analysis: the mergeable state behind `groups` (kwire.analytics.groups) and
  `findings` (kwire.analytics.findings and findings_groups, findings_traffic, findings_delivery,
  findings_resends), kept in kwire.analytics.traffic, delivery, resend_state and mergeable.
- kwire.analytics.changes_read, changes_apis, changes: who created, altered or deleted what (`changes`);
  findings_changes: admin_change.
- kwire.analytics.quorum_read, quorum: the KRaft controllers (`quorum`); findings_quorum.

Typical use: `agg = Aggregator(); for ex in exchanges: agg.add_exchange(ex); doc = agg.document()`;
`summary_json(doc)` is the text `kwire stats --json` prints.
"""

from __future__ import annotations

import json
import re

from kwire.safe_text import json_safe_text

from kwire.analytics.aggregate import FORMAT, Aggregator
from kwire.analytics.figures import Figures
from kwire.native.distribution import nearest_rank, percentiles
from kwire.native.exchange_facts import exchange_row, partition_rows, topic_names


_SCALAR_ARRAY = re.compile(r"\[\s+((?:-?[0-9][0-9.eE+-]*|null|true|false)(?:,\s+(?:-?[0-9][0-9.eE+-]*|null|true|false))*)\s+\]")


def summary_json(document: dict) -> str:
    """The one JSON text of a summary document: sorted keys, two-space indent, UTF-8 as is but what
    kwire.safe_text escapes (C1 controls, bidi and other format characters); arrays of numbers stay on
    one line."""
    text = json_safe_text(json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False))
    return _SCALAR_ARRAY.sub(lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)


__all__ = ["FORMAT", "Aggregator", "Figures", "exchange_row", "nearest_rank", "partition_rows",
           "percentiles", "summary_json", "topic_names"]
