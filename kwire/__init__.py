"""kwire: see what Apache Kafka clients and brokers say to each other on the wire.

Layers, lowest first; a module imports only the layers before its own in this chain (and the leaves
kwire.model and kwire.errors), as pyproject.toml's import-linter contract states and tests/test_layers.py
checks:

capture -> net -> tcp -> tls -> kafka -> codec -> pipeline | time_order -> query -> analytics -> forkpool
-> parallel -> live -> render -> selection | keyfile -> spark -> cli

Native code (kwire.native: the net layer's decoders, TCP's engine, the fused record loop, Kafka's stream layer with
its roles, framing, resync, request headers and pairing, the walk of record batches, the compiled decoders, the
exchange builder with its enricher and the exchange parts' wire format, and other kernels) implements the layers
up to the Exchange and imports, of kwire, only their contracts and tables. Kafka's stream layer frames and pairs,
and hands on raw exchanges (frames, not bodies); kwire.native.exchange_build decodes the bodies with kwire.codec's
decoders and builds each Exchange (kwire.model), kwire.native.exchange_enrich names its topics and measures lag.
docs/internals.md has the map.
"""

__version__ = "0.1.0"

from kwire import compiled as _compiled  # noqa: E402  (first: it chooses compiled or source for the rest)

_compiled.install()
