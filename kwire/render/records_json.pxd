# Cython declarations for kwire/render/records_json.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): a batch's header fields are C integers, read with kwire/c_reads.pxd and
# written into its text by _printf below.

cimport cython
cimport kwire.c_reads as c_reads
from kwire.codec.budget cimport RecordBudget
from libc.string cimport memchr, memcpy, strlen

# the module's private cache: a dict, so a look-up is a C call
cdef dict _ATTRIBUTES_JSON
cdef long long _I64_MAX, _I64_MIN
cdef bytes _BATCH, _ONE
cdef Py_ssize_t TEXT_ROOM  # the size of _batch_json's out


@cython.cdivision(True)
cdef inline Py_ssize_t _printf(char* out, Py_ssize_t room, const char* form, Py_ssize_t size,
                               const long long* numbers, const char** texts) noexcept:
    """The `size` bytes of `form` written at `out` with each %lld the next of `numbers` in decimal and each
    %s the next of `texts` (the only conversions in it: records_json's formats), the literal runs between
    them copied whole; the bytes written, -1 past `room`."""
    cdef const char* end = form + size
    cdef const char* mark
    cdef Py_ssize_t n = 0, run
    cdef int k
    cdef long long v
    cdef unsigned long long u
    cdef char digits[20]
    while True:
        mark = <const char*>memchr(form, c'%', end - form)
        run = (end if mark == NULL else mark) - form
        if n + run > room:
            return -1
        memcpy(out + n, form, run)
        n += run
        if mark == NULL:
            return n
        if mark[1] == c's':
            run = strlen(texts[0])
            if n + run > room:
                return -1
            memcpy(out + n, texts[0], run)
            n += run
            texts += 1
            form = mark + 2
            continue
        form = mark + 4  # %lld
        v = numbers[0]
        numbers += 1
        if v < 0:
            u = <unsigned long long>(-(v + 1)) + 1  # LLONG_MIN too
        else:
            u = <unsigned long long>v
        k = 0
        while True:
            digits[k] = <char>(48 + u % 10)
            k += 1
            u = u / 10
            if u == 0:
                break
        if n + k + 1 > room:
            return -1
        if v < 0:
            out[n] = c'-'
            n += 1
        while k > 0:
            k -= 1
            out[n] = digits[k]
            n += 1


cdef bytes _attributes_json(attributes)

@cython.locals(base_offset="long long", length="long long", epoch="long long", magic="long long",
               crc="long long", attributes="long long", last_delta="long long", base_ts="long long",
               max_ts="long long", producer_id="long long", producer_epoch="long long",
               base_sequence="long long", count="long long", n=Py_ssize_t, valid=bytes, attributes_text=bytes,
               numbers="long long[15]", texts="const char*[2]", out="char[1024]")
cdef bytes _batch_json(mv, Py_ssize_t pos, Py_ssize_t size)

@cython.locals(length=Py_ssize_t, magic=Py_ssize_t)
cdef Py_ssize_t _whole_v2_length(mv, Py_ssize_t pos, Py_ssize_t n) except -2

@cython.locals(n=Py_ssize_t, first=Py_ssize_t, pos=Py_ssize_t, length=Py_ssize_t, starts=list)
cpdef summary_fragment(data, RecordBudget budget)
