# Cython declarations for kwire/native/tcp_outoforder.py (the compiled core, setup.py): the mixin becomes the
# extension type HalfStream derives from; its state is declared on HalfStream (kwire/native/tcp_reassembly.pxd).

cdef class OutOfOrder:
    pass
