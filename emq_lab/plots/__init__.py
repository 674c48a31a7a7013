"""What the dives draw: a plotly figure per dive (``fired``, ``timeline``, ``keyspace``: pure functions from
state to a Figure, ``config`` their settings) and the scripts as HTML (``source``, ``header``, ``course``)."""
