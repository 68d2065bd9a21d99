# Cython declarations for kwire/tcp/outoforder.py (the compiled core, setup.py): the mixin becomes the
# extension type HalfStream derives from; its state is declared on HalfStream (kwire/tcp/reassembly.pxd).

cdef class OutOfOrder:
    pass
