"""Step-size tuning to a target acceptance rate by pilot runs (the papers hand-tune h to hit
0.25 / 0.40 / 0.55, Yuan & Wang 2024 §5.1; this automates that with a documented rule).

Rule: acceptance decreases with the step size. Starting from the method's default step, double or halve
it with pilot runs of ``pilot_iters`` iterations until the target acceptance is bracketed, then bisect
geometrically (``rounds`` times) between the bracket ends; each pilot starts where the previous one
stopped (so the pilots also burn in). Returns the step whose pilot acceptance was closest to the target.
Deterministic given the seed. Pilot time is not part of any reported sampling time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from samplers import registry
from samplers.problem import Problem


def tune_step(
    method_id: str,
    problem: Problem,
    target_accept: float,
    seed: int | np.random.SeedSequence = 0,
    *,
    pilot_iters: int = 500,
    rounds: int = 8,
    max_doublings: int = 30,
    step0: float | None = None,
    **hyper: Any,
) -> tuple[float, float]:
    """Tune ``spec.step_param`` of ``method_id`` so the acceptance rate is near ``target_accept``.

    Returns ``(step, pilot_acceptance)``."""
    if not 0.0 < target_accept < 1.0:
        raise ValueError(f"target acceptance must lie in (0, 1), got {target_accept!r}")
    if pilot_iters < 10 or rounds < 1:
        raise ValueError("pilot_iters must be >= 10 and rounds >= 1")
    spec = registry.get_method(method_id)
    if spec.step_param is None:
        raise ValueError(f"method {method_id!r} has no step size to tune")
    key = spec.step_param
    hyper.pop(key, None)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    children = iter(ss.spawn(2 * max_doublings + rounds + 2))
    state: dict[str, Any] = {"x0": None}

    def pilot(step: float) -> float:
        res = registry.run(
            method_id, problem, pilot_iters, next(children), x0=state["x0"], **{key: step}, **hyper
        )
        last = res.extra.get("final_state")
        if last is None and res.samples.shape[0]:
            last = res.samples[-1]
        state["x0"] = None if last is None else np.asarray(last)
        return res.accept_rate

    step = float(step0 if step0 is not None else spec.defaults[key])
    tried: list[tuple[float, float]] = []
    acc = pilot(step)
    tried.append((step, acc))
    lo = hi = None  # lo: acceptance above target, hi: below
    for _ in range(max_doublings):
        if acc > target_accept:
            lo = step
            if hi is not None:
                break
            step *= 2.0
        else:
            hi = step
            if lo is not None:
                break
            step /= 2.0
        acc = pilot(step)
        tried.append((step, acc))
    if lo is not None and hi is not None:
        for _ in range(rounds):
            step = float(np.sqrt(lo * hi))
            acc = pilot(step)
            tried.append((step, acc))
            if acc > target_accept:
                lo = step
            else:
                hi = step
    best = min(tried, key=lambda sa: abs(sa[1] - target_accept))
    return best
