"""Contract coverage reports (docs/coverage.md): what a suite made the mock do, and what it
never met. The counting is the backend's (``backend/coverage_counts.py``,
``GET /__admin/coverage``); this package turns a report into a terminal summary,
``coverage.json`` and a self-contained ``coverage.html`` for the pytest plugin
(``--idv-coverage``) and ``idv-mock coverage``.
"""
