"""The operations every memory computes, written once (docs/architecture.md, "Written once").

Below the kernel families (``closed_form``, ``training``) and the studies (``analysis``), above
``schemes``: the scores of a closed-form memory (:mod:`~assocmem.ops.scores`), strict-argmax
correctness and the exact population error (:mod:`~assocmem.ops.population`), the gradient of
the cross-entropy in the logits (:mod:`~assocmem.ops.cross_entropy`), mean ± s.e.
(:mod:`~assocmem.ops.stats`) and learning-rate selection (:mod:`~assocmem.ops.lr_selection`).
"""
