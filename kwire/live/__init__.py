"""The live dashboard's machinery, below the screen: packet sources (a network interface, or a
capture file replayed at its recorded pace), the feeder thread that runs them through the
Pipeline, windowed figures, and the snapshot the renderer draws (kwire.render.dashboard); the
Prometheus metrics' counts, label caps and families (metrics_state, labels, metric_families) and the
findings log's events (findings_log). Nothing here imports rich.
"""
