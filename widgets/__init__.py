"""Textual widgets that render blocks (one widget, one file).

Widgets import only the data model of ``app.stream`` and Textual/Rich; they
never call the network, the store or the dispatcher (DESIGN.md). The chat
TUI that fills this package is issue 6.
"""
