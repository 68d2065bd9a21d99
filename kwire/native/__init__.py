"""kwire's native code, in one place: what runs compiled, each with its pure-Python reference beside it.

Two kinds of module live here. Inline C for compiled modules elsewhere: a `.pxd` of inline C (Cython), which a
compiled module of kwire cimports under the module's name (`cimport kwire.native.c_reads as c_reads`), and a
`.py` of the same names in Python, which that module imports as such (`from kwire.native import c_reads`):

- `c_reads`: big-endian numbers, a byte, UTF-8 text, a run of bytes and a v2 record batch header read from a
  buffer, bounds-checked (the compiled decoders inline them too);
- `c_text`: a decimal and a %lld/%s format written into a caller's buffer; a batch key's text and a batch
  header's JSON text made whole;
- `c_ints`: a time's bucket at a resolution, a dict's look-up as a C call;
- `c_parts`: the exchange parts' wire format (kwire.native.exchange_wire) written and read;
- `cython_stand_in`: the `cython.compiled` the pure-Python build reads where Cython is not installed.

And modules compiled whole (setup.py, typed by the `.pxd` beside them; without a compiler their `.py` runs as it
is: that is the pure-Python reference, compared with the compiled build on every committed capture and the fuzz
corpus by tests/test_compiled.py and tests/fuzz/test_builds.py), which plain-Python callers use through a few
classes and functions. Of kwire they import only the contracts of the layers they implement (pyproject.toml's
import contract): kwire.capture.packet (the records' layouts, Packet), kwire.net.segment and kwire.net.layout (a
TCP segment, its flags, the header layout) and kwire.tcp.stream with kwire.tcp.closes (Connection, the stream
consumer's interface, the close reasons), kwire.net.tables and kwire.net.drops (the dissector tables, why a
packet was dropped), kwire.kafka.apis and kwire.kafka.primitives (the api table, varints), kwire.codec (the
schemas and the decoders made from them), kwire.model (the Exchange, what the boundary hands out),
kwire.kafka.error_codes (their names), kwire.vocabulary (the one table of facts: the rows' columns), kwire.errors,
kwire.outcomes and kwire.fields (error types, what became of a body, pickling by field); what else they need they
are given (caches, functions):

- `fused`: capture records in, TCP's stream consumers' calls out: the record loops (RecordFeed, the fast path
  for plain IPv4 TCP, the rest handed on as Packets) in front of the flow table;
- `tcp_flows`, `tcp_reassembly`, `tcp_outoforder`: TCP itself behind kwire.tcp.stream's contract: the flow table
  (FlowTable: connections, their opening, closing and eviction), each direction's reassembly (HalfStream) and
  its out-of-order segments and holes;
- `kafka_connection`, `kafka_roles`, `kafka_resync`, `kafka_headers`, `kafka_pairing`: Kafka's stream layer, the
  StreamConsumer of a TCP connection that carries Kafka (KafkaStream): which end is the client (RoleDetector, on
  any port), framing (`framing`), finding the next frame after a gap, a request's header (RequestHeader) and the
  pairing of requests with responses by correlation id (Pairing, PendingRequest, RawExchange: what it hands on);
- `exchange_build`, `exchange_enrich`, `exchange_wire`: paired exchanges out: a RawExchange's bodies decoded with
  kwire.codec's decoders into an Exchange (kwire.model; `build_exchange`, or `exchange_parts` then
  `build_from_parts` where the decoding is done in another process), the enrichment that needs the capture's
  order (Enricher: topic ids named from Metadata answers, each Fetch's lag against the offsets asked before), and
  the exchange parts' wire format between kwire's processes and Spark's tasks (PartsWriter, unpack);
- `exchange_sink`: where Kafka's stream layer hands each raw exchange (ExchangeSink: decoded, enriched, counted
  into an ExchangeCounts, kwire.pipeline.RunSummary's base), and which exchanges another process may decode
  (`offloadable`: kwire.parallel, kwire spark);
- `exchange_facts`, `exchange_row`, `exchange_produce`, `exchange_kinds`, `exchange_errors`: each exchange's facts,
  the columns of kwire.vocabulary's one table: an Exchange's row and its partitions' rows (ExchangeRow,
  PartitionRow: what stats, live, the metrics and Spark count), a Produce's partitions and answer read once, the
  exchanges that only look like trouble (waits, version negotiation), and the Kafka error codes of a body;
- `net_decode`, `net_layers`, `net_tunnels`: the net layer's decoders, for every packet the fused loop does not
  take (VLAN tags, IPv6, tunnels, Linux cooked captures: decode_segment -> a kwire.net.segment.Segment), registered
  in kwire.net.tables' dissector tables, where a new link layer or tunnel is added;
- `codec_records`, `codec_records_v2`, `codec_records_legacy`, `codec_budget`, `codec_compression`: a records
  field's record batches walked (CRCs checked, decompressed within the exchange's RecordBudget, summarized or
  decoded), for kwire.codec's decoders and the analytics that read records; codec_records_legacy (v0/v1 message
  sets) and codec_compression (the codecs' libraries, bounded) run as Python in every build: compiling them saves
  nothing measurable (docs/speed.md);
- `batch_json`: a records field of whole v2 batches in, its summary's JSON text out (kwire.render.records_json);
- `distribution`: exact latency distributions (integer ns -> count), merged, their nearest-rank percentiles and
  log histograms (kwire.analytics' figures and documents, kwire.live's metrics);
- `series`, `mergeable`, `caps`: the analytics' state that merges exactly in any order within a fixed size (time
  series that coarsen themselves, capped tables and sets, the smallest items kept by a total order, time
  histograms; FoldedTable, the one cap policy of every table keyed by a name from the wire: docs/bounds.md);
- `json_line`: an exchange's JSON line from cached parts in one orjson call, the renderer's call, its record
  sets' hook and the run's record budgets (kwire.render.jsonl, values, records_run);
- `record_walk`: classic pcap's record loop over a reader's buffer, and `RecordSink`, what capture readers hand
  their records to (kwire.capture.packet names it; kwire.native.fused's sinks derive from it);
- `time_queue`: payloads held in time order in sorted columns, released by a bound (kwire.time_order).

So the boundary stands today at paired exchanges: capture records in (kwire.capture's readers hand them to
`fused.RecordFeed`), TCP's streams through Kafka's stream layer (`kafka_connection`), raw exchanges (RawExchange:
two frames, their times) decoded into Exchanges (`exchange_build`), enriched (`exchange_enrich`) and counted
(`exchange_sink`) out, and each exchange's facts as rows (`exchange_facts`). TLS sits between TCP and Kafka as plain Python (kwire.tls: a StreamConsumer that wraps
Kafka's); kwire.pipeline, plain Python, wires a run. The modules of kwire.compiled.CORE outside this package are
the Exchange (kwire.model) and the analytics that fold the rows and read the Exchange for observations, each
with a .pxd; they move in here, or
become plain Python, behind one contract (capture records in, paired exchanges and their facts as columns out:
issue 44), so that outside this package every module is plain Python. kwire.capture, kwire.net, kwire.tcp,
kwire.kafka, kwire.codec and kwire.render are plain Python already (kwire.net keeps the dissector tables, the
segment and the header layout; kwire.tcp the contract, the close reasons and a recorder; kwire.kafka the api
table, the error codes and the wire's primitives; kwire.codec the schemas and the generator of their decoders).
"""
