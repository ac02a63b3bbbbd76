"""Compiled chain kernels. Each module exposes njit ``*_init`` (build explicit state), ``*_step``
(one transition, used by ``verify``) and ``*_sample`` (the whole chain loop, used by benchmarks)."""
