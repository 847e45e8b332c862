"""The analysis layer: theory, power-law fits, predictions, lr selection, frontier searches and
fits, and studies built on the kernels (trained-memory comparisons, real word laws)."""
