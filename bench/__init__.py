"""Benchmarks and the capacity model of scheduled-posts (issue 8).

Each module is runnable (``python -m bench.<name>``), writes one JSON file under
``bench/results/`` and prints a table; ``python -m bench`` (``make bench``) runs all five.
Every figure in ``docs/benchmarks.md`` and ``docs/capacity.md`` comes from these modules.
"""

from __future__ import annotations
