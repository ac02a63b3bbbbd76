"""Checks of the approx family (Korattikara et al. 2014; Seita et al. 2017; Bardenet et al. 2014).
Implementations live in :mod:`verify.approx_checks` (exact matrices: :mod:`verify.approx_matrix`; kernels and
mutants driven by :mod:`verify.approx_mutants`); claims in :mod:`verify.approx_claims`."""

from verify import approx_checks as C
from verify import approx_claims as CL
from verify import approx_rjmcmc as RJ
from verify.checks import Check

F = "approx"
CHECKS: list = [
    Check(
        "approx_austere_kvm",
        "exact",
        C.PAPER_K,
        "AustereMH(c) kernel vs exact matrix (+ mutants: with replacement, no FPC; m = N = MH)",
        C.check_austere_kvm,
        F,
    ),
    Check(
        "approx_nc_kvm",
        "exact",
        C.PAPER_S,
        "AustereMH(nc) kernel vs exact matrix (+ mutant)",
        C.check_nc_kvm,
        F,
    ),
    Check(
        "approx_minibatch_kvm",
        "exact",
        C.PAPER_S,
        "MHminibatch kernel vs exact matrix (+ mutant; m = N = Barker)",
        C.check_minibatch_kvm,
        F,
    ),
    Check(
        "approx_sublhd_kvm",
        "exact",
        C.PAPER_B,
        "MHSubLhd kernel vs exact matrix (+ mutant)",
        C.check_sublhd_kvm,
        F,
    ),
    Check(
        "approx_gibbs_kvm",
        "exact",
        C.PAPER_K,
        "austere Gibbs kernel vs exact matrix (+ mutant)",
        C.check_gibbs_kvm,
        F,
    ),
    Check(
        "approx_rjmcmc_kvm",
        "exact",
        RJ.PAPER,
        "RJMCMC (update/birth/death, exact test) kernel vs exact matrix over (subset, lattice theta) "
        "(+ mutant: birth density left out of the ratio)",
        RJ.check_rjmcmc_kvm,
        F,
    ),
    Check(
        "approx_rjmcmc_austere_kvm",
        "exact",
        RJ.PAPER,
        "RJMCMC with the K14 test (m=2, eps=0.2) kernel vs its exact matrix (all data orders, u integrated) "
        "(+ mutant: the exact-MH matrix)",
        RJ.check_rjmcmc_austere_kvm,
        F,
    ),
    Check(
        "approx_tv_austere",
        "theory",
        C.PAPER_K,
        "exact stationary TV of AustereMH vs eps with the Thm 1 bound",
        C.theory_tv_austere,
        F,
    ),
    Check(
        "approx_tv_rjmcmc",
        "theory",
        RJ.PAPER,
        "exact stationary TV of RJMCMC with the K14 test vs eps with the Thm 1 bound",
        RJ.theory_tv_rjmcmc,
        F,
    ),
    Check(
        "approx_tv_others",
        "theory",
        C.PAPER_S,
        "exact stationary TV of MHminibatch / MHSubLhd / AustereMH(nc) / austere Gibbs",
        C.theory_tv_others,
        F,
    ),
    Check(
        "approx_dp_vs_sim",
        "theory",
        C.PAPER_K,
        "DP error and data usage vs simulation",
        C.theory_dp_vs_sim,
        F,
    ),
    Check("approx_cor1", "theory", C.PAPER_S, "Corollary-1 bound vs t-statistic CDF error", C.theory_cor1, F),
    Check("approx_table3", "theory", C.PAPER_S, "correction L_inf errors vs Table 3", C.theory_table3, F),
    Check(
        "approx_claim_batch_order",
        "claim",
        C.PAPER_S,
        "Tables 1/2: MHminibatch < AustereMH(nc) < AustereMH(c) < MHSubLhd mean batch",
        CL.claim_batch_order,
        F,
    ),
    Check(
        "approx_claim_correction",
        "claim",
        C.PAPER_S,
        "correction L_inf at n=4000, sigma=1, lambda=10 is <= 1e-3",
        CL.claim_correction,
        F,
    ),
    Check(
        "approx_claim_speedups",
        "claim",
        C.PAPER_K,
        "§6.1 / §6.2: more samples per second than exact MH per eps (interval over chains)",
        CL.claim_speedups,
        F,
    ),
    Check(
        "approx_claim_gibbs_calibration",
        "claim",
        C.PAPER_K,
        "App. F Fig. 14: large conditionals underestimated, small ones overestimated",
        CL.claim_gibbs_calibration,
        F,
    ),
    Check(
        "approx_claim_step_sweep",
        "claim",
        C.PAPER_S,
        "Fig. 6: MHminibatch's mean minibatch grows with the step (MNIST-100k)",
        CL.claim_step_sweep,
        F,
    ),
    Check(
        "approx_claim_bias_floor",
        "claim",
        C.PAPER_K,
        "bias floor (stationary TV) increases with eps",
        CL.claim_bias_floor,
        F,
    ),
]
