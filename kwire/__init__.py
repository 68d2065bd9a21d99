"""kwire: see what Apache Kafka clients and brokers say to each other on the wire.

Layers, each importing only those listed before it:
capture -> net -> tcp -> kafka -> codec -> model -> render/analytics/spark -> cli.
(codec and model sit beside kafka: kafka imports them to build Exchanges.)
"""

__version__ = "0.1.0"
