"""One local SparkSession (local[2]) for the whole test session: Spark starts once."""

import pytest

pyspark = pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark():
    from kwire.spark.session import get_session

    session = get_session("local[2]")
    yield session
    session.stop()
