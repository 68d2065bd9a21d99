# Cython declarations for kwire/analytics/analysis.py (the compiled core, setup.py; the .py stays the one source
# and runs as it is without Cython): Analysis is an extension type holding its traffic and delivery states typed,
# so add (once per exchange) hands them the row and the observations in C.

from kwire.analytics.delivery cimport DeliveryState
from kwire.analytics.traffic cimport TrafficState

cdef class Analysis:
    cdef public object groups, changes, quorum, end_to_end, rules
    cdef public TrafficState traffic
    cdef public DeliveryState delivery

    cpdef add(self, row, observations=*)
