"""Spark's automatic registration of Python data sources finds `pyspark_*` packages that define a
`DefaultSource`: this one makes `spark.read.format("kwire")` work in any session whose Python has kwire
installed, with no register() call (see kwire.spark.source)."""

from kwire.spark.source import KwireDataSource as DefaultSource

__all__ = ["DefaultSource"]
