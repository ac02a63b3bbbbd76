"""minibatch-mcmc-bench harness: data layer, workflow and CLI."""

import samplers  # noqa: F401  (chooses NUMBA_CACHE_DIR before numba is first imported)
