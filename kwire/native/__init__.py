"""kwire's native code, in one place: what runs compiled, each with its pure-Python reference beside it.

Two kinds of module live here. Inline C for compiled modules elsewhere: a `.pxd` of inline C (Cython), which a
compiled module of kwire cimports under the module's name (`cimport kwire.native.c_reads as c_reads`), and a
`.py` of the same names in Python, which that module imports as such (`from kwire.native import c_reads`):

- `c_reads`: big-endian numbers, a byte, UTF-8 text, a run of bytes and a v2 record batch header read from a
  buffer, bounds-checked (the compiled decoders inline them too);
- `c_text`: a decimal and a %lld/%s format written into a caller's buffer; a batch key's text and a batch
  header's JSON text made whole;
- `c_ints`: a time's bucket at a resolution, a dict's look-up as a C call;
- `c_parts`: the exchange parts' wire format (kwire.parts_wire) written and read;
- `cython_stand_in`: the `cython.compiled` the pure-Python build reads where Cython is not installed.

And modules compiled whole (setup.py, typed by the `.pxd` beside them; without a compiler their `.py` runs as it
is), which plain-Python callers use through a few classes and functions, given what they need to know of Kafka
(caches, functions) so that nothing here imports a layer of kwire:

- `batch_json`: a records field of whole v2 batches in, its summary's JSON text out (kwire.render.records_json);
- `distribution`: exact latency distributions (integer ns -> count), merged, their nearest-rank percentiles and
  log histograms (kwire.analytics' figures and documents, kwire.live's metrics);
- `json_line`: an exchange's JSON line from cached parts in one orjson call, the renderer's call, its record
  sets' hook and the run's record budgets (kwire.render.jsonl, values, records_run);
- `record_walk`: classic pcap's record loop over a reader's buffer, and `RecordSink`, what capture readers hand
  their records to (kwire.capture.packet names it; kwire.fused's sinks derive from it);
- `time_queue`: payloads held in time order in sorted columns, released by a bound (kwire.time_order).

The modules of kwire.compiled.CORE outside this package still sit in their layers, each with its .pxd; they
move in here a layer at a time, behind one contract (capture records in, paired exchanges and their facts as
columns out: issue 44), so that outside this package every module is plain Python. kwire.render and
kwire.capture are plain Python already.
"""
