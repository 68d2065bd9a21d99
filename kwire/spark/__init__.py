"""kwire on Apache Spark: the `kwire stats` summary of many capture files (kwire.spark.job)."""
