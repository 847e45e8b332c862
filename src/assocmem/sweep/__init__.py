"""Sweeps: declarative grids (spec), planning into batches (plan), a crash-safe SQLite store
(store), local and Dask execution with resume (execute), and DataFrame results (results); what
each kind of run means to all of them lives in one registry (kinds)."""
