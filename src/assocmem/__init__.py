"""assocmem: scaling laws for associative memories (Cabannes, Dohmatob, Bietti, ICLR 2024)."""

__version__ = "0.1.0"
