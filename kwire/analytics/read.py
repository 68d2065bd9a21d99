"""An exchange read once for the analytics: its row, partition rows, topic names and observations.

`read_exchange(ex, watch)` gives what an Aggregator is fed (`Aggregator.add(row, partitions, names,
observations)`), the same values as kwire.native.exchange_facts' exchange_row, partition_rows and
topic_names and kwire.analytics.observe's observations, with each body read once for all of them
where they read the same fields (a Produce's partitions, batches and answer:
kwire.native.exchange_produce). `kwire stats` (kwire.analytics.aggregate), `kwire live`
(kwire.live.state) and `kwire spark` (kwire.spark.results) all read exchanges here, so they count
the same.
"""

from __future__ import annotations

from kwire.native.exchange_facts import exchange_row, partition_rows, produce_rows, topic_names
from kwire.analytics.observe import observations
from kwire.native.exchange_produce import read_answer, request_partitions
from kwire.native.exchange_enrich import topic_pairs
from kwire.model import Exchange


def read_exchange(ex: Exchange, watch=None) -> tuple[dict, list[dict], list[tuple], list[tuple]]:
    """(row, partition rows, topic names, observations) of one exchange; `watch` as for
    kwire.analytics.observe.observations."""
    if ex.api == "Produce":
        return _produce(ex, watch)
    row = exchange_row(ex)
    return row, partition_rows(ex), topic_names(ex), observations(ex, watch, row)


def _produce(ex: Exchange, watch) -> tuple[dict, list[dict], list[tuple], list[tuple]]:
    codes, failed, bases = read_answer(ex)
    row = exchange_row(ex, codes)
    partitions = request_partitions(ex.request)
    return (row, produce_rows(row["ts_ns"], partitions), topic_pairs(ex.api_key, ex.api_version, ex.response),
            observations(ex, watch, row, (partitions, codes, failed, bases)))
