"""Warm the shared Numba cache (NUMBA_CACHE_DIR) once before the cells run.

For every method in ``snakemake.params.methods`` (one family's methods that the cells use), run a
few iterations on the first registered synthetic target of a matching space (smoke sizes, method
defaults) so the kernel signatures the cells use are compiled and cached; later jobs load them in
milliseconds. A method that cannot be warmed generically is listed with the reason (it then
compiles in its first cell: slower, still correct).
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
