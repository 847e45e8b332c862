"""The analysis layer: theory, power-law fits, predictions, lr selection and studies built on
the kernels (capacity frontiers, trained-memory comparisons, real word laws)."""
