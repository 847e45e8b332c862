"""Real data beyond the paper (issue 7): trained memories on a real word law against Zipf(α̂)
(``beyond-laws``) and under label noise (``beyond-noise``), and closed-form memories on real
word laws (docs: beyond/words.md, beyond/noise.md). Light: its experiments in
:mod:`assocmem.studies.real_data.experiment`. No study command: ``assocmem compare-trained``
and ``assocmem words --compare`` run the comparisons with their own flags."""

from assocmem.plugins import defer_experiment

defer_experiment("beyond-noise", "assocmem.studies.real_data.experiment:NOISE")
defer_experiment("beyond-laws", "assocmem.studies.real_data.experiment:LAWS")
