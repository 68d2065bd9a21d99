"""kwire.analytics.observe on exchanges with a body missing or empty, for every api: a request that
did not decode beside a response that did (an ErrorCode) once raised in ShareFetch/ShareAcknowledge
(found by scripts/campaign.py). Observations, rows and facts never raise on what decoding left."""

from __future__ import annotations

import itertools

from kwire.native.exchange_facts import exchange_row, partition_rows, topic_names
from kwire.analytics.observe import observations
from kwire.kafka.apis import APIS
from kwire.model import NO_RESPONSE, PAIRED, Exchange
from kwire.outcomes import DECODED_BODY, BodyOutcome

BODIES = (None, {}, {"ErrorCode": 5, "Responses": [{"Topic": "t", "Partitions": [{"ErrorCode": 5}]}]},
          {"GroupId": "g", "Topics": [{"TopicName": "t", "Partitions": [{"PartitionIndex": 0}]}]})


def test_every_api_with_bodies_missing_or_partial():
    for key, spec in APIS.items():
        for request, response, status in itertools.product(BODIES, BODIES, (PAIRED, NO_RESPONSE)):
            ex = Exchange(connection_id=1, client="10.0.0.1:5000", broker="10.0.0.2:9092", status=status,
                          correlation_id=1, api_key=key, api=spec.name, api_version=spec.max_version,
                          client_id="c", request_ts_ns=1_000, response_ts_ns=2_000 if status == PAIRED else None,
                          request=request, response=response if status == PAIRED else None,
                          request_outcome=DECODED_BODY if request else BodyOutcome("malformed", reason="cut short"))
            observations(ex)
            exchange_row(ex)
            partition_rows(ex)
            topic_names(ex)
