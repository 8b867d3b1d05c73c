"""Serving a class: compute slots and single flight, the heavy-job queue and its bounded child
processes, upload bounds, local data files and profiling. Widgets live in ``ui``
(docs/architecture.md)."""
