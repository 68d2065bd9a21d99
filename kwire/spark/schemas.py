"""Explicit Spark schemas of the Parquet tables `kwire spark --out DIR` writes.

- `exchanges` (EXCHANGE_SCHEMA): one row per exchange, the columns of kwire.native.exchange_facts.exchange_row.
- `partitions` (PARTITION_SCHEMA): one row per (exchange, topic, partition) that moved records or
  measured lag: the columns of kwire.native.exchange_facts.partition_rows, plus client, broker and
  correlation_id, which with ts_ns join a partition row to its exchange.

Instants are integer nanoseconds since the epoch (`ts_ns`, ...); `latency_ms` is milliseconds (to the
nanosecond), null unless paired. Names, types, nullability and units are kwire.vocabulary's, those of every
output (docs/vocabulary.md).
"""

from __future__ import annotations

from pyspark.sql.types import (ArrayType, BooleanType, DoubleType, IntegerType, LongType, StringType, StructField,
                               StructType)

from kwire.native.exchange_facts import EXCHANGE_COLUMNS
from kwire.vocabulary import EXCHANGE_FACTS, PARQUET, PARTITION_TABLE, Fact

_SPARK_TYPES = {"int64": LongType(), "int32": IntegerType(), "float64": DoubleType(), "string": StringType(),
                "bool": BooleanType(), "strings": ArrayType(StringType(), False)}


def spark_schema(facts: tuple[Fact, ...]) -> StructType:
    """The Spark schema of a table of `facts` (kwire.vocabulary: their Parquet columns, types and nullability)."""
    return StructType([StructField(f.name, _SPARK_TYPES[f.type], f.nullable) for f in facts if PARQUET in f.outputs])


EXCHANGE_SCHEMA = spark_schema(EXCHANGE_FACTS)
PARTITION_SCHEMA = spark_schema(PARTITION_TABLE)


def exchange_tuple(row: dict) -> tuple:
    return tuple(row[name] for name in EXCHANGE_COLUMNS)


_PARTITION_NAMES = tuple(f.name for f in PARTITION_SCHEMA.fields)


def partition_tuple(row: dict) -> tuple:
    return tuple(row[name] for name in _PARTITION_NAMES)
