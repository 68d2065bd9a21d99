# Cython declarations for kwire/analytics/aggregate.py (the compiled core, setup.py; the .py stays the one
# source and runs as it is without Cython): Aggregator is an extension type, so each exchange reaches its
# figures, timeline and analysis in C. A Python subclass (kwire.live.metrics_state.MeteredAggregator) keeps its
# own fields in an instance dict; kwire.fields pickles both.

cimport cython

from kwire.analytics.analysis cimport Analysis
from kwire.native.caps cimport FoldedTable
from kwire.analytics.figures cimport Figures, PartitionFigures
from kwire.native.series cimport Series
from kwire.native.exchange_row cimport ExchangeRow, PartitionRow, row_of
from kwire.model cimport Exchange

cdef class Aggregator:
    cdef public Figures _total
    cdef public FoldedTable _by_api_version, _by_client_id, _by_broker, partitions, share_groups
    cdef public object names
    cdef public object first_ns, last_ns, tls
    cdef public dict _cells
    cdef public list slowest, unanswered_first
    cdef public Series timeline
    cdef public Analysis analysis

    cpdef add_exchange(self, Exchange ex)
    cpdef add(self, row, partitions=*, names=*, observed=*)
    @cython.locals(r=ExchangeRow, part=PartitionRow, cell=list, dist=dict, table=FoldedTable, figures=PartitionFigures)
    cpdef add_figures(self, row, partitions=*, names=*)
