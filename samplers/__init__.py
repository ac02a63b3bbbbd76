"""Numba MCMC kernels and targets (no I/O, no plotting).

Layout: ``targets/`` (models as data + @njit functions), ``kernels/`` (compiled chain loops with
explicit state), ``proposals.py`` (shared proposal densities), ``alias.py`` + ``poisson_minibatch.py``
(shared minibatch machinery), ``methods/`` (one registration module per family) and
``registry.py`` (the single list of methods and targets).
"""
