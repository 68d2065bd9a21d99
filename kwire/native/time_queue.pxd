# Cython declarations for kwire/native/time_queue.py (compiled by setup.py; the .py runs as it is without
# Cython): TimeQueue is an extension type with its counters held as C integers; its columns stay Python
# arrays and a list. Times outside 64 bits are clamped (_clamped) before they are held in C.

cimport cython

cdef long long _I64_MAX, _I64_MIN

cdef object _clamped(object ns)

cdef class TimeQueue:
    cdef public long long window_ns, max_held, max_bytes, held_bytes, arrivals, ask_at, clock, last
    cdef public long long late, late_unanswered, late_bound, late_wire, early
    cdef public object times, sizes, payloads, settled

    @cython.locals(n=Py_ssize_t, place=Py_ssize_t, at_ns="long long", done_ns="long long")
    cpdef add(self, at, done, long long size, bint unanswered, payload)
    cpdef list add_all(self, items, times_of, make, passes)
    cpdef list settle(self)
    cdef void _count_late(self, long long at, bint unanswered)
    @cython.locals(cut=Py_ssize_t, due=Py_ssize_t, freed="long long", room="long long")
    cdef list _over(self)
    cdef list _due(self, long long bound)
    cdef list _take(self, Py_ssize_t cut)
    cpdef list finish(self)
