"""Speculative-decoding lab: an exact speculative sampler and the RFC-hook experiments.

Modules (import the one you need; none of them is imported here, so that ``import
v22sdk.specdec`` stays free of torch):

- :mod:`.sampler`      the exact sampler (Leviathan et al. / Chen et al.), Draft/Target/Scheduler
                        interfaces, batched scheduled rounds, plain greedy decoding for comparison.
- :mod:`.toy`          models with exactly known distributions (Markov chains, uniform draft,
                        target-as-draft) for tests, controls and the benchmark.
- :mod:`.corpus`       the corpora (Python prose and source; Tang and Song poems from Debian's
                        fortunes-zh), loaded at run time, each with its character vocabulary.
- :mod:`.models`       the char-level target transformer and the EAGLE-style draft with its
                        normalisation arms.
- :mod:`.metrics`      analytic tau (from TV distances) and empirical tau (from the real sampler).
- :mod:`.stats`        paired confidence intervals and hook 1's pre-registered criterion.
- :mod:`.attributes`   the text plugin's 384 attribute values of a character in its context.
- :mod:`.verification` rejection prediction (logistic models, AUROC, ECE) and the schedulers
                        that use it.
- :mod:`.costs`        measured unit costs of a round (target pass, draft step, plugin call).
- :mod:`.expansion`    ways of giving a trained draft a new feature source.
- :mod:`.experiments`  the registry of experiments behind ``v22sdk specdec run --experiment``:
  :mod:`.experiment` (hook 1), :mod:`.hook2`, :mod:`.hook5`; :mod:`.cli` exposes them.
"""
