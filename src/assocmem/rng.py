"""Named random streams: a run's randomness depends only on (seed, stream, run identity).

Library functions take a ``torch.Generator``; only runners call :func:`generator` to turn an
integer seed into a named stream. Streams are derived with a stable hash (BLAKE2b), never
Python's salted ``hash()``, so a trial's embeddings and samples do not depend on which trials
share its batch, how batches are chunked, or on which machine they run (for a given device type).
"""

import hashlib

import torch


def stream_seed(seed: int, stream: str, *ids: int | str) -> int:
    """A 63-bit seed for ``stream`` of run ``ids`` under the user's ``seed``."""
    key = "/".join(str(part) for part in (seed, stream, *ids)).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") >> 1


def generator(
    seed: int, stream: str, *ids: int | str, device: torch.device | str = "cpu"
) -> torch.Generator:
    """A fresh generator for one named stream of one run."""
    gen = torch.Generator(device=device)
    gen.manual_seed(stream_seed(seed, stream, *ids))
    return gen
