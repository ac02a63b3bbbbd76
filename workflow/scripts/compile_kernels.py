"""Warm the shared Numba cache (NUMBA_CACHE_DIR) once before the cells run.

For every method in ``snakemake.params.methods`` (one warm-up group's methods that the cells use), run
a few iterations on the first registered synthetic target of a matching space (smoke sizes, method
defaults) so the kernel signatures the cells use are compiled and cached; later jobs load them in
milliseconds. With ``snakemake.params.metrics``, call the compiled cores of ``bench.metrics`` (every
experiment's ESS, MSE and marginal errors) on small inputs instead. A method that cannot be warmed
generically is listed with the reason (it then compiles in its first cell: slower, still correct).
"""

import json
import sys
import time

from bench.outputs import atomic_write_text
from samplers import registry

log = open(snakemake.log[0], "w")  # noqa: F821 (snakemake object injected by `script:`)
sys.stderr = log

rows = []
t_all = time.perf_counter()
if snakemake.params.metrics:  # noqa: F821
    import numpy as np

    from bench import metrics as MT

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 2))
    MT.ess_report(x, 1.0)
    for m in MT.ESS_METHODS:
        MT.ess(x, method=m)
    MT.mse_running(x, np.zeros(2), np.ones(2), checkpoints=np.array([10, 100, 400]))
    states = rng.integers(0, 2, (400, 3))
    MT.marginal_l2_error_running(states, 2, np.full((3, 2), 0.5), checkpoints=np.array([10, 400]))
    MT.marginal_l2_from_counts(np.ones((3, 2)), np.full((3, 2), 0.5))
    rows.append({"method": "bench.metrics", "status": "ok", "target": None,
                 "seconds": time.perf_counter() - t0, "reason": ""})  # fmt: skip
for mid in snakemake.params.methods:  # noqa: F821
    spec = registry.get_method(mid)
    entry = {"method": mid, "status": "not warmed", "target": None, "seconds": 0.0, "reason": ""}
    reasons = []
    for tid, tspec in registry.TARGETS.items():
        if tspec.data is not None or tspec.space not in spec.spaces:
            continue
        t0 = time.perf_counter()
        try:
            problem = registry.build_problem(tid, 0, scale="smoke")
            registry.run(mid, problem, 20, 1)
        except Exception as e:  # noqa: BLE001 -- try the next target
            reasons.append(f"{tid}: {type(e).__name__}: {e}")
            continue
        entry.update(status="ok", target=tid, seconds=time.perf_counter() - t0)
        break
    if entry["status"] != "ok":
        entry["reason"] = "; ".join(reasons) or "no synthetic target of a matching space"
        print(f"{mid}: not warmed ({entry['reason']})", file=log)
    rows.append(entry)
    print(json.dumps(entry), file=log, flush=True)

summary = {
    "seconds": time.perf_counter() - t_all,
    "methods": rows,
    "warmed": sum(r["status"] == "ok" for r in rows),
    "total": len(rows),
}
atomic_write_text(snakemake.output[0], json.dumps(summary, indent=1) + "\n")  # noqa: F821
log.close()
