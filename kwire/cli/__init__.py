"""The command-line interface: one click command per module, each thin (parse, call, render)."""
