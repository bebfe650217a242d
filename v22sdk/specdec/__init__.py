"""Speculative-decoding lab: an exact speculative sampler and the RFC hook-(1) experiment.

Modules (import the one you need; none of them is imported here, so that ``import
v22sdk.specdec`` stays free of torch):

- :mod:`.sampler`     the exact sampler (Leviathan et al. / Chen et al.), Draft/Target/Scheduler
                       interfaces, plain greedy decoding for comparison.
- :mod:`.toy`         models with exactly known distributions (Markov chains, uniform draft,
                       target-as-draft) for tests, controls and the benchmark.
- :mod:`.corpus`      the two corpora, loaded at run time from the installed Python distribution.
- :mod:`.models`      the char-level target transformer and the EAGLE-style draft with its
                       normalisation arms.
- :mod:`.metrics`     analytic tau (from TV distances) and empirical tau (from the real sampler).
- :mod:`.stats`       paired confidence intervals and the pre-registered criterion.
- :mod:`.experiment`  the whole pre-registered experiment; :mod:`.cli` exposes it.
"""
