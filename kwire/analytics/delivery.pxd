# Cython declarations for kwire/analytics/delivery.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): Batch, one per Produce batch seen, is an extension type holding
# its Kept evidence typed, so making and counting one stays in C; DeliveryState too, so that produce_batch
# (once per Produce batch) reads its table (a Capped) and the batch in C.

cimport cython
cimport kwire.native.mergeable as _mergeable
from kwire.native.mergeable cimport Capped, Kept

cdef class Batch:
    cdef public object sends, failed
    cdef public Kept evidence

@cython.locals(batch=Batch, evidence=Kept)
cpdef Batch _batch_of(sends, failed, limit, list items)

cdef class Producer:
    cdef public object txn, who

cdef class DeliveryState:
    cdef public object batches, end_txns, resends, producers
    cdef public dict txn_batches, txn_adds, stalls, share

    @cython.locals(batch=Batch, batches=Capped)
    cpdef produce_batch(self, tuple ob)
