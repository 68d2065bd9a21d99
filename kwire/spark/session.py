"""The SparkSession `kwire spark` runs on: local by default, a cluster with --master, or spark-submit's.

`get_session(master)`:
- under spark-submit (the driver was started by Spark: PYSPARK_GATEWAY_PORT is set) the session
  spark-submit configured is used as is, master included, and sys.stderr is separated again from
  stdout (see `separate_stderr`);
- otherwise a session is created with `master` (default "local[*]"), no web UI, Spark's console
  progress bar off (kwire draws its own), and Spark's own logging cut down to errors. Unless
  `verbose`, the JVM's stderr (the launcher's warnings, log4j, executors' messages) goes to
  `jvm_log_path()` instead of the user's terminal: the JVM inherits that file as its stderr when it
  starts, and kwire's own stderr is put back at once. A JVM that does not start is a KwireError
  that names the log.

`ship_kwire(spark)` adds a zip of the kwire package to the session (SparkContext.addPyFile) when the
master is not local, so executors on other machines import the same kwire. Its dependencies
(zstandard, lz4, cramjam, crc32c) must be installed on the executors.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from contextlib import contextmanager

from kwire.errors import KwireError

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


def jvm_log_path() -> str:
    return os.path.join(tempfile.gettempdir(), f"kwire-spark-{os.getuid()}.log")


@contextmanager
def _stderr_into(path: str | None):
    """File descriptor 2 pointed at `path` (None: left alone) for what starts meanwhile."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


def _tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = [line.strip() for line in f.read()[-4000:].splitlines() if line.strip()]
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def get_session(master: str | None = None, app_name: str = "kwire spark", *, verbose: bool = True):
    from pyspark.sql import SparkSession

    if under_spark_submit():
        separate_stderr()
        spark = SparkSession.builder.appName(app_name).getOrCreate()
    else:
        log = None if verbose else jvm_log_path()
        try:
            with _stderr_into(log):
                spark = _new_session(SparkSession, master, app_name)
        except Exception as exc:  # noqa: BLE001 - no JVM: PySparkRuntimeError, Py4JError, OSError...
            first = (str(exc).splitlines() or [""])[0]
            last = _tail(log) if log else ""
            raise KwireError(f"Spark did not start: {type(exc).__name__}: {first}" + (f" ({last})" if last else "")
                             + (f"; Spark's messages are in {log}" if log else "")) from None
    spark.sparkContext.setLogLevel("ERROR")
    ship_kwire(spark)
    return spark


def _new_session(SparkSession, master: str | None, app_name: str):
    master = master or "local[*]"
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    java_opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    return (SparkSession.builder.master(master).appName(app_name)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", java_opts)
            .config("spark.executor.extraJavaOptions", java_opts)
            .getOrCreate())


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
