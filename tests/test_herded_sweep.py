"""herded_gibbs_sample's written-out sweep (samplers.kernels.herded.herded_gibbs_sweep) gives the same chain
as a loop of herded_gibbs_step, bit for bit (Chen et al. 2016 Alg. 1 / §2 vector rule): binary and K > 2,
dense, hashed and shared weights, both initialisations."""

from __future__ import annotations

import numpy as np
import pytest

from samplers.kernels import herded as HG
from samplers.targets import chain_crf as CC
from samplers.targets import herded_models as HM


def _step_loop(fg, idx, x, W, seen, hkeys, fill, n, init, rng):
    K = fg.card.max()
    logits, p = np.empty(K), np.empty(K)
    out = np.empty((n, fg.n), dtype=np.int64)
    for it in range(n):
        for i in range(fg.n):
            assert HG.herded_gibbs_step(fg, idx, x, W, seen, hkeys, fill, i, init, rng, logits, p) >= 0
        out[it] = x
    return out, W


@pytest.mark.parametrize(
    "model,storage,shared,init",
    [
        ("crf", "dense", False, HG.INIT_MID),
        ("crf", "dense", False, HG.INIT_RANDOM),
        ("crf", "hashed", False, HG.INIT_RANDOM),
        ("ising", "dense", False, HG.INIT_MID),
        ("ising", "dense", True, HG.INIT_MID),
        ("ising", "hashed", False, HG.INIT_RANDOM),
    ],
)
def test_sweep_equals_loop_of_steps(model, storage, shared, init):
    if model == "crf":
        ch = CC.random_chain(3, 6, 7, 4, 1.5)
        fg = CC.to_factor_graph(ch)
        x0 = np.argmax(ch.unary, axis=1).astype(np.int64)
    else:
        img = HM.toy_image(6, 6)
        y = HM.noisy_observation(img, 2.0, np.random.default_rng(5))
        fg = HM.ising_denoise(y, 2.0, 1.0)
        x0 = (y.ravel() > 0).astype(np.int64)
    idx, n_slots, cap = HG.build_index(fg, shared=shared, storage=storage)
    a = HG.herded_gibbs_init(fg, x0, n_slots, cap)
    b = HG.herded_gibbs_init(fg, x0, n_slots, cap)
    S, _, _, status = HG.herded_gibbs_sample(fg, idx, *a, 40, init, False, np.random.default_rng(1), 1)
    x, W, seen, hkeys, fill, _ = b
    T, W2 = _step_loop(fg, idx, x, W, seen, hkeys, fill, 40, init, np.random.default_rng(1))
    assert (status == 0).all()
    np.testing.assert_array_equal(S, T)
    np.testing.assert_array_equal(a[1], W2)
