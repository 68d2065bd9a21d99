"""The SparkSession `kwire spark` runs on: local by default, a cluster with --master, or spark-submit's.

`get_session(master)`:
- under spark-submit (the driver was started by Spark: PYSPARK_GATEWAY_PORT is set) the session
  spark-submit configured is used as is, master included, and sys.stderr is separated again from
  stdout (see `separate_stderr`);
- otherwise a session is created with `master` (default "local[*]"), no web UI, Spark's console
  progress bar off (kwire draws its own), and Spark's own logging cut down to errors.

`ship_kwire(spark)` adds a zip of the kwire package to the session (SparkContext.addPyFile) when the
master is not local, so executors on other machines import the same kwire. Its dependencies
(zstandard, lz4, cramjam, crc32c) must be installed on the executors.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile

LOG4J = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
"""


def under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _log4j_file() -> str:
    path = os.path.join(tempfile.gettempdir(), f"kwire-spark-log4j2-{os.getuid()}.properties")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == LOG4J:
                return path
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(LOG4J)
    return path


def separate_stderr() -> None:
    """Under spark-submit, Spark's PythonRunner merges the driver's stderr into its stdout, which
    would put kwire's closing line into `--json` output; point sys.stderr back at the stderr of the
    JVM that started this process (Linux /proc), when there is one."""
    target = f"/proc/{os.getppid()}/fd/2"
    try:
        if os.path.samefile(target, "/proc/self/fd/1"):
            return  # the JVM's stderr is our stdout too: nothing better to do
        sys.stderr = open(target, "w", buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError:
        pass


def get_session(master: str | None = None, app_name: str = "kwire spark"):
    from pyspark.sql import SparkSession

    if under_spark_submit():
        separate_stderr()
        spark = SparkSession.builder.appName(app_name).getOrCreate()
    else:
        master = master or "local[*]"
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        java_opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
        spark = (SparkSession.builder.master(master).appName(app_name)
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.extraJavaOptions", java_opts)
                 .config("spark.executor.extraJavaOptions", java_opts)
                 .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    ship_kwire(spark)
    return spark


def ship_kwire(spark) -> None:
    sc = spark.sparkContext
    if sc.master.startswith("local") or getattr(sc, "_kwire_shipped", False):
        return
    import kwire

    root = os.path.dirname(os.path.abspath(kwire.__file__))
    target = os.path.join(tempfile.mkdtemp(prefix="kwire-"), "kwire.zip")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for folder, _, files in os.walk(root):
            for name in files:
                if name.endswith(".py"):
                    full = os.path.join(folder, name)
                    z.write(full, os.path.relpath(full, os.path.dirname(root)))
    sc.addPyFile(target)
    sc._kwire_shipped = True
