"""schema_for imports only the module named after the api; every schema module is named so, and the
lazy lookup finds exactly what discovering every module finds."""

from __future__ import annotations

import subprocess
import sys

from kwire.codec.schemas import all_schemas, module_name, schema_for
from kwire.kafka.apis import APIS


def test_every_schema_module_is_named_after_its_api():
    for (api_key, kind), schema in all_schemas().items():
        assert api_key in APIS, schema.name
        expected = f"kwire.codec.schemas.{module_name(APIS[api_key].name)}"
        assert expected in sys.modules, (schema.name, expected)
        assert getattr(sys.modules[expected], "REQUEST" if kind == "request" else "RESPONSE") is schema


def test_lookup_finds_what_discovery_finds():
    found = all_schemas()
    for api_key in list(APIS) + [-1, 999, 32767]:
        for kind in ("request", "response"):
            assert schema_for(api_key, kind) is found.get((api_key, kind))


def test_module_names():
    assert module_name("Fetch") == "fetch"
    assert module_name("OffsetForLeaderEpoch") == "offset_for_leader_epoch"
    assert module_name("ApiVersions") == "api_versions"


def test_a_lookup_loads_one_module():
    code = ("import sys; from kwire.codec.schemas import schema_for; schema_for(1, 'response'); "
            "print(sorted(m for m in sys.modules if m.startswith('kwire.codec.schemas.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['kwire.codec.schemas.fetch']"
