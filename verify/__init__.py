"""Verification: exact transition matrices, kernel-vs-matrix tests, bound checks, theory and claims tables.

Imports :mod:`samplers` only. Families register checks in ``verify/families/<family>.py``.
"""

import samplers  # noqa: F401,E402  (chooses NUMBA_CACHE_DIR before numba is first imported)
