# Text written in C, inlined by Cython where this file is cimported: a number in decimal, and a format of
# %lld and %s conversions (printf's, for what they are: glibc's snprintf costs more than the dicts a caller
# writes text to avoid), into the caller's char buffer. put_decimal and put_format serve the compiled branches
# of kwire's modules (`if cython.compiled:`), whose other branch writes the same text with Python's formatting;
# the texts made whole here (_batch_key_text, _batch_header_text) have their Python twin in kwire/native/c_text.py, which the pure
# build calls under the same name. The tests, run on both builds, hold the two to the same bytes.

cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
cimport kwire.native.c_reads as c_reads
from libc.string cimport memchr, memcpy, strlen


@cython.cdivision(True)
cdef inline Py_ssize_t put_decimal(char* out, long long v) noexcept:
    """v in decimal at `out` (at most 20 bytes: "-9223372036854775808"); the bytes written. Two digits a
    step, from "00" to "99" (half the divisions of one at a time)."""
    cdef const char* _PAIRS = (b"0001020304050607080910111213141516171819202122232425262728293031323334353637383940"
                               b"4142434445464748495051525354555657585960616263646566676869707172737475767778798081"
                               b"828384858687888990919293949596979899")
    cdef char digits[20]
    cdef unsigned long long u = <unsigned long long>(-(v + 1)) + 1 if v < 0 else <unsigned long long>v
    cdef unsigned long long two
    cdef Py_ssize_t k = 20, n = 0
    while u >= 100:  # the digits from the end, two at a time
        two = u % 100
        u = u / 100
        k -= 2
        digits[k] = _PAIRS[2 * two]
        digits[k + 1] = _PAIRS[2 * two + 1]
    if u >= 10:
        k -= 2
        digits[k] = _PAIRS[2 * u]
        digits[k + 1] = _PAIRS[2 * u + 1]
    else:
        k -= 1
        digits[k] = <char>(48 + u)
    if v < 0:
        out[0] = c'-'
        n = 1
    memcpy(out + n, digits + k, 20 - k)
    return n + 20 - k


cdef inline Py_ssize_t put_format(char* out, Py_ssize_t room, const char* form, Py_ssize_t size,
                                  const long long* numbers, const char** texts) noexcept:
    """The `size` bytes of `form` written at `out` with each %lld the next of `numbers` in decimal and
    each %s the next of `texts` (its only conversions), the literal runs between them copied whole; the
    bytes written, -1 past `room`."""
    cdef const char* end = form + size
    cdef const char* mark
    cdef Py_ssize_t n = 0, run
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
        else:  # %lld
            if n + 20 > room:
                return -1
            n += put_decimal(out + n, numbers[0])
            numbers += 1
            form = mark + 4


cdef inline bytes _batch_key_text(bytes kind, long long x, long long y, long long z):
    """b"('%s', %d, %d, %d))" % (kind, x, y, z): a batch's key after its topic and partition as repr writes
    it (kwire.native.mergeable.stable_hash3 hashes it)."""
    cdef char text[96]
    cdef long long numbers[3]
    cdef const char* texts[1]
    cdef const char* form = b"('%s', %lld, %lld, %lld))"
    numbers[0] = x
    numbers[1] = y
    numbers[2] = z
    texts[0] = kind  # (3 bytes: "pid" or "crc"; room for the longest numbers)
    return PyBytes_FromStringAndSize(text, put_format(text, 96, form, strlen(form), numbers, texts))


cdef inline object _batch_header_text(bytes form, Py_ssize_t size, object buf, Py_ssize_t pos, bytes valid,
                                      bytes attributes):
    """`form` (a %lld and %s format: kwire.render.records_json's) written with the v2 batch header at buf[pos:]
    (its 61 bytes, checked in the buffer): size first when size >= 0, then base offset, batch length, leader
    epoch, magic, CRC, `valid`, `attributes`, last offset delta, base and max timestamp, producer id and epoch,
    base sequence, record count, last offset and the batch's size; None when the last offset is past 64 bits
    (or the text past 1 KiB)."""
    cdef const unsigned char* p = c_reads._in(buf, pos, 61)
    cdef long long numbers[16]
    cdef const char* texts[2]
    cdef char out[1024]
    cdef long long base_offset = <long long>c_reads._be(p, 8)
    cdef long long last_delta = <int>c_reads._be(p + 23, 4)
    cdef long long length = <int>c_reads._be(p + 8, 4)
    cdef Py_ssize_t n
    if base_offset < -0x7FFFFFFFFFFFFFFF - 1 - last_delta if last_delta < 0 else base_offset > 0x7FFFFFFFFFFFFFFF - last_delta:
        return None
    numbers[0], numbers[1], numbers[2] = size, base_offset, length
    numbers[3], numbers[4] = <int>c_reads._be(p + 12, 4), <signed char>p[16]
    numbers[5], numbers[6] = <unsigned int>c_reads._be(p + 17, 4), last_delta
    numbers[7], numbers[8] = <long long>c_reads._be(p + 27, 8), <long long>c_reads._be(p + 35, 8)
    numbers[9], numbers[10] = <long long>c_reads._be(p + 43, 8), <short>c_reads._be(p + 51, 2)
    numbers[11], numbers[12] = <int>c_reads._be(p + 53, 4), <int>c_reads._be(p + 57, 4)
    numbers[13], numbers[14] = base_offset + last_delta, 12 + length
    texts[0], texts[1] = valid, attributes  # C strings of bytes the caller holds
    n = put_format(out, 1024, form, len(form), &numbers[0] if size >= 0 else &numbers[1], texts)
    return PyBytes_FromStringAndSize(out, n) if n >= 0 else None  # never cut: None rather than a cut batch
