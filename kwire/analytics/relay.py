"""What makes two messages one relayed: the rule the analyses that count a client's own sends share.

A capture that holds both legs of something that relays Kafka's bytes as they are (a TLS terminator such as
stunnel, a TCP proxy, a port forward) sees each request and each answer twice: the same correlation id, at
another broker address, a moment later. A message with the correlation id of an earlier one, seen at another
broker address within RELAY_WINDOW_NS of it, is that message relayed, not sent again: produce_retry
(kwire.analytics.findings_delivery) counts one send, end-to-end latency (kwire.analytics.end_to_end_doc) one
delivery. A client's own resend is a new request, with a correlation id of its own.
"""

RELAY_WINDOW_NS = 1_000_000_000
