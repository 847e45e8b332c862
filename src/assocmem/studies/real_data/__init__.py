"""Real data beyond the paper (issue 7): trained memories on a real word law against Zipf(α̂)
and under label noise, and closed-form memories on real word laws (docs: beyond/words.md,
beyond/noise.md)."""
