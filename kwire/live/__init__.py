"""The live dashboard's machinery, below the screen: packet sources (a network interface, or a
capture file replayed at its recorded pace), the feeder thread that runs them through the
Pipeline, windowed figures, and the snapshot the renderer draws (kwire.render.dashboard).
Nothing here imports rich.
"""
