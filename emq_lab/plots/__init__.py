"""Plotly figures: pure functions from state to a Figure, one module per dive."""
