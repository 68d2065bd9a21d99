"""`kwire spark`: the `kwire stats` document of capture archives, computed by Apache Spark.

kwire.spark.job wires the DataFrames (map: kwire.spark.mapside, shuffle rows: kwire.spark.wire,
reduce: kwire.spark.stitch and kwire.spark.reread, facts: kwire.spark.results); kwire.spark.session
starts or joins the SparkSession and ships kwire to executors; kwire.spark.source is the `kwire`
data source (`spark.read.format("kwire")`). Importing this package does not import pyspark.
"""
