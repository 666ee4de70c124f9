"""Keeping CPython's full collections out of a traversal's hot loop.

A running engine holds a large, long-lived heap: the target definition, the
resource view and the node records of every traversal it runs (about half a
million containers for a 10,000-resource stack). Every full collection walks
all of it, and the default thresholds run one every few hundred thousand
allocations, that is several times per 10,000-node operation, at about
60 ms each: a tenth of the whole run, for garbage that reference counting
frees anyway (journal changes, records replaced in the view).

While a run is in progress the oldest generation's threshold is raised, so
full collections become about a hundred times rarer; young collections
still run as usual, so cycles made by plugin code (an exception and its
traceback) are still collected while they are young. The thresholds are put
back when the run ends; nothing is ever switched off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Young collections between two full ones while an engine runs (default 10).
_RUNNING_THRESHOLD2 = 1000


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Raise the full-collection threshold for the duration; nesting-safe."""
    first, second, third = gc.get_threshold()
    if third >= _RUNNING_THRESHOLD2:
        yield  # already raised (a nested run, or the process chose it)
        return
    gc.set_threshold(first, second, _RUNNING_THRESHOLD2)
    try:
        yield
    finally:
        now = gc.get_threshold()
        if now[2] == _RUNNING_THRESHOLD2:  # unless someone changed it meanwhile
            gc.set_threshold(now[0], now[1], third)
