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
  that names the log;
- either way kwire is shipped to the executors and the `kwire` data source (kwire.spark.source) is
  registered in the session.

A session kwire creates for a cluster master ships the driver's kwire, compiled core included, and its
dependencies to the executors as one archive (kwire.spark.ship: `spark.archives`, on the executors' Python
path), and says so on stderr; the executors need only the driver's Python. Under spark-submit the archive is
the submitter's to give (`python -m kwire.spark.ship` prints the options); without it `ship_kwire(spark)` adds a
zip of kwire's .py files (SparkContext.addPyFile, removed when the process exits), and the executors run kwire as
pure Python where its dependencies are installed.

`job_error(exc)` is the one line a failed job is reported with; `ExecutorWatch` cancels the job when
no executor is left for a while (every worker lost), which Spark itself would wait out forever.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from contextlib import contextmanager

from kwire.errors import KwireError
from kwire.safe_text import term_safe

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
        conf = shipped_conf() if master and not master.startswith("local") else {}
        try:
            with _stderr_into(log):
                spark = _new_session(SparkSession, master, app_name, conf)
        except Exception as exc:  # noqa: BLE001 - no JVM: PySparkRuntimeError, Py4JError, OSError...
            first = (str(exc).splitlines() or [""])[0]
            last = _tail(log) if log else ""
            raise KwireError(f"Spark did not start: {type(exc).__name__}: {first}" + (f" ({last})" if last else "")
                             + (f"; Spark's messages are in {log}" if log else "")) from None
    spark.sparkContext.setLogLevel("ERROR")
    ship_kwire(spark)
    from kwire.spark.source import KwireDataSource

    spark.dataSource.register(KwireDataSource)  # spark.read.format("kwire"), also where kwire is not installed
    return spark


def _new_session(SparkSession, master: str | None, app_name: str, conf: dict[str, str]):
    master = master or "local[*]"
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Python workers of a local master run this very interpreter (its kwire, pyarrow, pandas),
        # not whatever `python3` the PATH finds first.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    java_opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", java_opts)
               .config("spark.executor.extraJavaOptions", java_opts))
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def shipped_conf() -> dict[str, str]:
    """The settings that ship kwire and its dependencies to a cluster's executors (kwire.spark.ship), said on
    stderr in one line."""
    from kwire.spark import ship

    try:
        shipped = ship.environment()
    except OSError as exc:
        raise KwireError(f"cannot pack kwire for the executors: {exc}") from None
    print(f"kwire: {shipped.line()}", file=sys.stderr)
    return ship.session_conf(shipped)


def ship_kwire(spark) -> None:
    """Under spark-submit without kwire's archive (`python -m kwire.spark.ship` says how to give it): a zip of
    kwire's .py files, so executors run it as pure Python where its dependencies are installed."""
    from kwire.spark.ship import ENV_NAME

    sc = spark.sparkContext
    if sc.master.startswith("local") or getattr(sc, "_kwire_shipped", False):
        return
    if f"#{ENV_NAME}" in (sc.getConf().get("spark.archives") or ""):
        sc._kwire_shipped = True
        return
    import kwire

    root = os.path.dirname(os.path.abspath(kwire.__file__))
    folder = tempfile.mkdtemp(prefix="kwire-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # Spark serves it until the session ends
    target = os.path.join(folder, "kwire.zip")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for folder, _, files in os.walk(root):
            for name in files:
                if name.endswith(".py"):
                    full = os.path.join(folder, name)
                    z.write(full, os.path.relpath(full, os.path.dirname(root)))
    sc.addPyFile(target)
    sc._kwire_shipped = True


_EXCEPTION_LINE = re.compile(r"^(?:[\w.$]+\.)?(\w*(?:Exception|Error)): (.+)$")


def job_error(exc: BaseException) -> str:
    """One line for a failed Spark job: the Python error an executor raised when there is one (its
    last line), else the JVM's reason (Job aborted due to stage failure: ...), without stack traces."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    python = [line for line in lines if _EXCEPTION_LINE.match(line) and not line.startswith(("org.", "java.", "scala."))
              and "Traceback" not in line]
    jvm = [line for line in lines if line.startswith(("org.apache.spark.", "java.", "py4j."))]
    if python:
        line = python[-1]
    elif jvm:
        line = jvm[0].split(": ", 1)[-1]
    else:
        line = lines[0] if lines else type(exc).__name__
    line = term_safe(line.split(" at org.apache", 1)[0].split("\\n", 1)[0])  # it may quote wire text
    return line if len(line) <= 400 else line[:397] + "..."


class ExecutorWatch:
    """A daemon thread that cancels every job when no executor has been registered for `wait_s`
    seconds (a cluster master without workers accepts the job and waits; so would kwire, forever).
    `lost` says whether it did; `close()` stops it. Local masters need no watch."""

    def __init__(self, spark, wait_s: float):
        self.sc = spark.sparkContext
        self.wait_s = wait_s
        self.lost = False
        self._stop = threading.Event()
        self._thread = None
        if not self.sc.master.startswith("local") and wait_s > 0:
            self._thread = threading.Thread(target=self._run, name="kwire-executors", daemon=True)
            self._thread.start()

    def executors(self) -> int:
        infos = self.sc._jsc.sc().statusTracker().getExecutorInfos()
        return max(0, len(infos) - 1)  # the driver is listed too

    def _run(self) -> None:
        since = None
        while not self._stop.wait(0.5):
            try:
                count = self.executors()
            except Exception:  # noqa: BLE001 - the JVM went away: nothing left to watch
                return
            now = time.monotonic()
            if count:
                since = None
            elif since is None:
                since = now
            elif now - since >= self.wait_s:
                self.lost = True
                try:
                    self.sc.cancelAllJobs()
                except Exception:  # noqa: BLE001
                    pass
                return

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
