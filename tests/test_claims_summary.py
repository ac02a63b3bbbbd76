"""The claims summary on the HTML report's first page (workflow/scripts/claims_summary.py, included by
workflow/report/workflow.rst): every claims row appears once with its paper, artifact, our number, the
paper's and its verdict; links name only files the report registers (results/report/<category>/...);
the first page includes the summary exactly when the report registered it. Deterministic, no sampling."""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("claims_summary", REPO / "workflow/scripts/claims_summary.py")
CS = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CS)

ROWS = [
    {
        "claim_id": "exact_mh.tg.minibatch_beats_full.r0.25",
        "paper": "Yuan & Wang 2024 Table 4",
        "statement": "truncated Gaussian at acceptance 0.25: every minibatch method beats every full batch",
        "evidence": "results/exact_mh_tg_ess.csv",
        "measured": "worst minibatch PoissonMH 72 vs best full batch Barker 55 (x1.30)",
        "holds": "True",
        "family": "exact_mh",
        "paper_value": "x3.47",
        "value": "1.2985",
        "ci_low": "1.2555",
        "ci_high": "1.3398",
        "runs_held": "96/100",
        "verdict": "holds (x1.30 [1.26, 1.34], 96/100 runs)",
    },
    {
        "claim_id": "exact_mh.rlr_50d.minibatch_beats_full.r0.55",
        "paper": "Yuan & Wang 2024 Table 7",
        "statement": "rlr_50d at acceptance 0.55: every exact minibatch method beats every full batch",
        "evidence": "results/exact_mh_rlr_50d_ess.csv",
        "measured": "worst minibatch PoissonMH 24.5 vs best full batch MALA 24.8 (x0.99)",
        "holds": "False",
        "family": "exact_mh",
        "paper_value": "x1.61",
        "value": "0.9865",
        "ci_low": "0.93",
        "ci_high": "1.06",
        "runs_held": "4/10",
        "verdict": "a tie within the interval: does not hold at the point value (x0.99 [0.93, 1.06], 4/10)",
    },
    {
        "claim_id": "exact_mh.rlr_10d_n2e5.minibatch_beats_full_authors_both.r0.25",
        "paper": "Yuan & Wang 2024 Table 6",
        "statement": "rlr_10d_n2e5 at acceptance 0.25: both sides as the authors' code",
        "evidence": "results/exact_mh_rlr_10d_n2e5_ess.csv (no PoissonMH (authors' counts) at 0.25)",
        "measured": "not run",
        "holds": "",
        "family": "exact_mh",
        "verdict": "not run (no PoissonMH (authors' counts) at 0.25)",
    },
    {
        "claim_id": "exact_mh.tuna_sgld_faster",
        "paper": "Yuan & Wang 2024 §5.3, Figs. 2, 13",
        "statement": "Tuna-SGLD reaches the accuracy level sooner than TunaMH",
        "evidence": "results/exact_mh_mnist_claims.csv",
        "measured": "7/8 (data set, step) settings at 0.95 x the best final accuracy",
        "holds": "False",
        "family": "exact_mh",
        "paper_value": "held (every step size)",
        "runs_held": "7/8 settings",
        "verdict": "does not hold (7/8 settings, one chain per setting, no bootstrap interval)",
    },
    {
        "claim_id": "S17-correction-4000",
        "paper": "Seita et al. 2017 (S17)",
        "statement": "L_inf(N(0,1) * C_1 - logistic) <= 1e-3 at N=4000",
        "evidence": "solve_correction(n=4000)",
        "measured": "0.000886",
        "holds": "True",
        "family": "approx",
    },
    {
        "claim_id": "S17-table1",
        "paper": "Seita et al. 2017 (S17)",
        "statement": "Table 1/2 ordering of mean minibatch size",
        "evidence": "no results/approx_table1.csv yet (run the approx experiments)",
        "holds": "n/a (quick)",
        "family": "approx",
    },
    {
        "claim_id": "pgda_beats_pgits",
        "paper": "Zhang & De Sa 2019",
        "statement": "PGDA's acceptance beats PGITS'",
        "evidence": "continuous_spin_20x20; the KL curves are experiment pg_spin (Fig. 1c)",
        "measured": "accept PGDA 1.0000 vs PGITS 0.9119",
        "holds": "True",
        "family": "poisson_gibbs",
    },
]
REPORT = {  # category dir -> files (what results/report/ holds after aggregate and verify)
    "exact_mh_tg": ["exact_mh_tg_ess.csv", "exact_mh_tg_ess.png", "exact_mh_tg_claims_ci.csv"],
    "exact_mh_rlr": ["exact_mh_rlr_50d_ess.csv", "exact_mh_rlr_50d_ess.png"],
    "exact_mh_mnist": ["exact_mh_mnist_claims.csv", "exact_mh_mnist_3v5_accuracy.png"],
    "verify": ["claims.csv", "verify_exact.csv"],
    "summary": ["claims_summary.html"],
}


class _Page(HTMLParser):
    """Rows (cells' text), row titles and link paths of the rendered summary."""

    def __init__(self):
        super().__init__()
        self.titles, self.links, self.hrefs = [], [], []
        self.text: dict[str, list[str]] = {}  # claim id -> its row's text
        self._row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self._row = []
        if tag == "td" and "title" in a and a.get("class") == "claim":
            self.titles.append(a["title"])
            self.text[a["title"]] = self._row
        if tag == "a":
            self.links.append(a["data-path"])
            self.hrefs.append(a["href"])

    def handle_data(self, data):
        if self._row is not None:
            self._row.append(data)


@pytest.fixture
def report_dir(tmp_path):
    for d, names in REPORT.items():
        (tmp_path / "results/report" / d).mkdir(parents=True)
        for n in names:
            (tmp_path / "results/report" / d / n).write_text("x")
    return tmp_path


def _parse(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    return p


def test_every_claim_row_appears_with_its_verdict_and_links_resolve(report_dir, monkeypatch):
    monkeypatch.chdir(report_dir)
    files = CS.report_files("results/report")
    assert "claims_summary.html" not in files and files["claims.csv"] == "results/report/verify/claims.csv"
    claims = pd.DataFrame(ROWS).fillna("")
    page = _parse(CS.render(claims, files, live=True))
    assert sorted(page.titles) == sorted(r["claim_id"] for r in ROWS)  # each claim once
    text = {k: " ".join(" ".join(v).split()) for k, v in page.text.items()}
    assert "holds x1.30 [1.26, 1.34], 96/100 runs" in text["exact_mh.tg.minibatch_beats_full.r0.25"]
    assert "x3.47" in text["exact_mh.tg.minibatch_beats_full.r0.25"]  # ours beside the paper's
    assert "a tie within the interval" in text["exact_mh.rlr_50d.minibatch_beats_full.r0.55"]
    assert "not run" in text["exact_mh.rlr_10d_n2e5.minibatch_beats_full_authors_both.r0.25"]
    assert "7/8 settings" in text["exact_mh.tuna_sgld_faster"]
    assert "one measurement, no interval" in text["S17-correction-4000"]
    assert "not run n/a (quick)" in text["S17-table1"] and "Table 1/2" in text["S17-table1"]
    # links: only files the report has, each existing; a figure and a table where both exist
    assert page.links and set(page.links) <= set(files.values())
    assert all((report_dir / p).is_file() for p in page.links)
    assert all(h.startswith("javascript:void(") for h in page.hrefs)
    assert "results/report/exact_mh_tg/exact_mh_tg_ess.png" in page.links
    assert "results/report/exact_mh_tg/exact_mh_tg_claims_ci.csv" in page.links
    assert "results/report/exact_mh_mnist/exact_mh_mnist_3v5_accuracy.png" in page.links
    assert "results/report/exact_mh_rlr/exact_mh_rlr_10d_n2e5_ess.csv" not in page.links  # not in the report
    # the counts line and the per-paper groups, in the order the papers first appear
    out = CS.render(claims, files)
    assert "7 claims:" in out and out.index("Yuan &amp; Wang 2024") < out.index("Seita et al. 2017")
    dead = CS.render(claims, files, live=False)
    assert "javascript:" not in dead and sorted(_parse(dead).titles) == sorted(r["claim_id"] for r in ROWS)


def test_counts_paper_artifact_and_short_claims():
    from bench.experiments.exact_mh import verdicts as V

    assert f"{V.BOOT_N:,} resamples" in CS.BOOT_TEXT and str(V.BOOT_SEED) in CS.BOOT_TEXT
    assert CS.claim_text(ROWS[0]) == (
        "truncated Gaussian, acceptance 0.25: every minibatch method beats every full-batch one"
    )
    assert CS.claim_text({"claim_id": "exact_mh.tg_top_two"}).startswith("truncated Gaussian, every rate:")
    assert CS.claim_text(ROWS[4]) == ROWS[4]["statement"]
    claims = pd.DataFrame(ROWS).fillna("")
    assert CS.counts(claims) == {"holds": 3, "fails": 1, "tie": 1, "not_run": 2}
    assert CS.paper_and_artifact("Yuan & Wang 2024 Table 1/4") == ("Yuan & Wang 2024", "Table 1/4")
    assert CS.paper_and_artifact("Yuan & Wang 2024 Tables 2 / 5") == (
        "Yuan & Wang 2024",
        "Tables 2 / 5",
    )
    assert CS.paper_and_artifact("Yuan & Wang 2024 §5.3, Figs. 2, 13") == (
        "Yuan & Wang 2024",
        "§5.3, Figs. 2, 13",
    )
    assert CS.paper_and_artifact("Seita et al. 2017 (S17)", "Table 1 ordering (reduced GMM)") == (
        "Seita et al. 2017",
        "Table 1",
    )
    assert CS.paper_and_artifact("Yuan & Wang 2024 (authors' RLR code)") == (
        "Yuan & Wang 2024",
        "authors' RLR code",
    )
    assert CS.paper_and_artifact("Zhang & De Sa 2019", "x", "curves (Fig. 1c)") == (
        "Zhang & De Sa 2019",
        "Fig. 1c",
    )


def test_cli_writes_fragment_and_page_and_says_not_run_without_claims(report_dir, monkeypatch):
    monkeypatch.chdir(report_dir)
    pd.DataFrame(ROWS).to_csv("results/claims.csv", index=False)
    args = [
        "--fragment",
        "results/claims_summary.html",
        "--standalone",
        "results/report/summary/claims_summary.html",
    ]
    assert CS.main(args) == 0
    frag = Path("results/claims_summary.html").read_text()
    page = Path("results/report/summary/claims_summary.html").read_text()
    assert frag.startswith("<style>") and "id='claims-summary'" in frag and "javascript:" in frag
    assert page.startswith("<!doctype html>") and "javascript:" not in page
    Path("results/claims.csv").unlink()
    assert CS.main(args) == 0
    assert "not run" in Path("results/claims_summary.html").read_text()


def test_first_page_includes_the_summary_when_registered(report_dir, monkeypatch):
    """workflow/report/workflow.rst as Snakemake renders it (Jinja with the registered files, then docutils
    from the working directory): the summary's table is on the page iff claims_summary.html is registered."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    monkeypatch.chdir(report_dir)
    pd.DataFrame(ROWS).to_csv("results/claims.csv", index=False)
    CS.main(["--fragment", "results/claims_summary.html"])
    env = Environment(trim_blocks=True, lstrip_blocks=True)  # snakemake.report's settings
    rst = (REPO / "workflow/report/workflow.rst").read_text()

    class Snakemake:
        config = {"scale": "paper", "root_seed": 1}

    class Rec:
        name = "claims_summary.html"
        path = Path("results/report/summary/claims_summary.html")

    def page(files):
        text = env.from_string(rst).render(snakemake=Snakemake, categories={}, files=files)
        return publish_parts(text, writer_name="html")["html_body"]

    on, off = page([Rec()]), page([])
    assert "id='claims-summary'" in on and on.index("claims-summary") < on.index("minibatch-mcmc-bench:")
    assert all(r["claim_id"] in on for r in ROWS)
    assert "claims-summary" not in off and "minibatch-mcmc-bench:" in off
    assert not re.search(r"system-message|Problems with", on)
