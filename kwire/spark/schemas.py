"""Explicit Spark schemas of the Parquet tables `kwire spark --out DIR` writes.

- `exchanges` (EXCHANGE_SCHEMA): one row per exchange, the columns of kwire.analytics.facts.exchange_row.
- `partitions` (PARTITION_SCHEMA): one row per (exchange, topic, partition) that moved records or
  measured lag: the columns of kwire.analytics.facts.partition_rows, plus client, broker and
  correlation_id, which with ts_ns join a partition row to its exchange.

Instants are integer nanoseconds since the epoch (`ts_ns`, ...); `latency_ms` is milliseconds (to the
nanosecond), null unless paired. Names and units are those of every output (docs/vocabulary.md).
"""

from __future__ import annotations

from pyspark.sql.types import (ArrayType, BooleanType, DoubleType, IntegerType, LongType, StringType, StructField,
                               StructType)

from kwire.analytics.facts import ACK_COLUMNS, EXCHANGE_COLUMNS

EXCHANGE_SCHEMA = StructType([
    StructField("ts_ns", LongType(), False),
    StructField("request_ts_ns", LongType(), True),
    StructField("response_ts_ns", LongType(), True),
    StructField("client", StringType(), False),
    StructField("broker", StringType(), False),
    StructField("client_id", StringType(), True),
    StructField("api_key", IntegerType(), True),
    StructField("api", StringType(), True),
    StructField("api_version", IntegerType(), True),
    StructField("correlation_id", IntegerType(), False),
    StructField("status", StringType(), False),
    StructField("unanswered", StringType(), True),
    StructField("latency_ms", DoubleType(), True),
    StructField("request_bytes", LongType(), True),
    StructField("response_bytes", LongType(), True),
    StructField("error_codes", ArrayType(StringType(), False), False),
    StructField("failed", BooleanType(), False),
    StructField("request_outcome", StringType(), True),
    StructField("response_outcome", StringType(), True),
    StructField("request_error", StringType(), True),
    StructField("response_error", StringType(), True),
    StructField("request_trailing_bytes", LongType(), False),
    StructField("response_trailing_bytes", LongType(), False),
    StructField("group_id", StringType(), True),
    StructField("wait", BooleanType(), False),
    StructField("negotiation", BooleanType(), False),
])

PARTITION_SCHEMA = StructType([
    StructField("ts_ns", LongType(), False),
    StructField("api", StringType(), False),
    StructField("group_id", StringType(), True),
    StructField("topic", StringType(), False),
    StructField("partition", IntegerType(), True),
    StructField("bytes", LongType(), False),
    StructField("records", LongType(), False),
    StructField("fetch_offset", LongType(), True),
    StructField("high_watermark", LongType(), True),
    StructField("lag", LongType(), True),
    StructField("acquired", LongType(), False),
    StructField("redelivered", LongType(), False),
    *[StructField(name, LongType(), False) for name in ACK_COLUMNS],
    StructField("client", StringType(), False),
    StructField("broker", StringType(), False),
    StructField("correlation_id", IntegerType(), False),
])

def exchange_tuple(row: dict) -> tuple:
    return tuple(row[name] for name in EXCHANGE_COLUMNS)


_PARTITION_NAMES = tuple(f.name for f in PARTITION_SCHEMA.fields)


def partition_tuple(row: dict) -> tuple:
    return tuple(row[name] for name in _PARTITION_NAMES)
