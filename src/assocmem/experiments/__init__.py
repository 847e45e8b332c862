"""Experiments: one per paper figure or study beyond the paper, with its judged claims."""
