"""Sweeps: declarative grids (spec), planning into batches (plan), a crash-safe SQLite store
(store), local and Dask execution with resume (execute), and DataFrame results (results)."""
