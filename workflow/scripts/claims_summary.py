"""The claims at a glance: results/claims.csv rendered as one HTML table, one row per claim.

    python workflow/scripts/claims_summary.py --claims results/claims.csv --report-dir results/report \
        --fragment results/claims_summary.html --standalone results/report/summary/claims_summary.html

Columns: paper (author-year), artifact (Table / Figure / section), the claim, our number, the paper's
(``paper_value``), the verdict with its interval (``verdict``, else ``holds``) and links to the claim's
table and figure in the HTML report. ``--fragment`` is what workflow/report/workflow.rst includes on the
report's first page (a ``<style>`` and a ``<div id="claims-summary">``; links open the report's entries
through its JavaScript ``app``); ``--standalone`` is a complete page without links (the report shows it
in the "All claims" category). Links only name files under ``--report-dir`` (what the report registers:
``results/report/<category>/<name>.csv|png``).
"""

from __future__ import annotations

import argparse
import html
import math
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

ARTIFACT_RE = re.compile(
    r"((?:Tables?|Figs?\.|Figures?|Alg\.|App\.|§)\s*[0-9A-Z][0-9A-Za-z.]*"
    r"(?:\s*(?:/|,|and)\s*(?:(?:Tables?|Figs?\.)\s*)?[0-9][0-9A-Za-z.]*)*)"
)
# figures of a claim's table beyond the same-named one (<table>.png)
EXTRA_FIGURES = {
    "exact_mh_mnist_claims": ("exact_mh_mnist_3v5_accuracy.png", "exact_mh_mnist_7v9_accuracy.png"),
}
# short names of the exact-minibatch ESS/s claims (ids exact_mh.<setting>.<claim>.r<rate> and the
# every-rate truncated-Gaussian ids); the full statement stays in the row's tooltip
SHORT = {
    "top_two": "Poisson-MALA and Poisson-Barker are the top two",
    "minibatch_beats_full": "every minibatch method beats every full-batch one",
    "minibatch_beats_full_authors": "minibatch beats full batch timed as the authors' code",
    "minibatch_beats_full_authors_both": "minibatch beats full batch, both timed as the authors' code",
}
EVERY_RATE = {
    "exact_mh.tg_top_two": "top_two",
    "exact_mh.minibatch_beats_full": "minibatch_beats_full",
    "exact_mh.minibatch_beats_full_authors": "minibatch_beats_full_authors",
    "exact_mh.minibatch_beats_full_authors_both": "minibatch_beats_full_authors_both",
}
SETTING = {"tg": "truncated Gaussian"}
# the resampling of bench.experiments.exact_mh.verdicts (BOOT_N, BOOT_SEED), as the legend says it
BOOT_TEXT = "10,000 resamples of runs with replacement, fixed seed 20240521"
STATUS = {
    "holds": "holds",
    "fails": "does not hold",
    "tie": "a tie within the interval",
    "not_run": "not run",
}
CSS = """
/* the report's landing page (Workflow): this summary first, at full width, the rule graph below it */
div.h-screen.overflow-auto:has(#claims-summary) { align-items: flex-start; justify-content: flex-start; }
div.flex.gap-3:has(#claims-summary) { flex-direction: column; }
div.prose:has(#claims-summary) { max-width: none; }
#claims-summary { font-size: 13px; line-height: 1.35; color: #1f2937; }
#claims-summary h2 { font-size: 18px; margin: 0 0 4px 0; }
#claims-summary p { margin: 2px 0 6px 0; }
#claims-summary table { border-collapse: collapse; width: 100%; margin: 6px 0 14px 0; table-layout: auto; }
#claims-summary th, #claims-summary td { border-bottom: 1px solid #e5e7eb; padding: 2px 6px;
  text-align: left; vertical-align: top; }
#claims-summary thead th { background: #f3f4f6; position: sticky; top: 0; }
#claims-summary tr.paper td { background: #eef2ff; font-weight: 600; padding-top: 6px; }
#claims-summary td.num { font-variant-numeric: tabular-nums; }
#claims-summary td.links { white-space: nowrap; }
#claims-summary .small { color: #6b7280; font-size: 11px; }
#claims-summary .v { display: inline-block; border-radius: 4px; padding: 0 5px; font-weight: 600; }
#claims-summary .holds { background: #dcfce7; color: #166534; }
#claims-summary .fails { background: #fee2e2; color: #991b1b; }
#claims-summary .tie { background: #fef3c7; color: #92400e; }
#claims-summary .not_run { background: #e5e7eb; color: #374151; }
#claims-summary a { color: #1d4ed8; text-decoration: underline; }
"""


def _txt(v) -> str:
    """A claims-table cell as text ('' for empty / NaN)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    s = str(v).strip()
    return "" if s.lower() == "nan" else s


def _num(v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x


def _holds(v) -> bool | None:
    s = _txt(v).lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    return None


def paper_and_artifact(paper: str, statement: str = "", evidence: str = "") -> tuple[str, str]:
    """("Yuan & Wang 2024", "Table 1/4") from a claims row's ``paper`` (artifact: the first Table / Fig. /
    § / Alg. / App. reference in ``paper``, else in ``statement``, else in ``evidence``; "-" if none)."""
    p = _txt(paper)
    m = re.match(r"^(.*?\b(?:19|20)\d\d)\b(.*)$", p)
    who, rest = (m.group(1).strip(), m.group(2)) if m else (p, "")
    for src in (rest, _txt(statement), _txt(evidence)):
        a = ARTIFACT_RE.search(src)
        if a:
            return who, a.group(1).strip().rstrip(",.")
    # a note in parentheses that is not a short form such as "(S17)": "authors' RLR code"
    note = re.fullmatch(r"\s*\((.+)\)\s*", rest)
    if note and not re.fullmatch(r"[A-Z]+[0-9]+", note.group(1)):
        return who, note.group(1)
    return who, "-"


def report_files(report_dir: str | os.PathLike, skip: tuple[str, ...] = ("summary",)) -> dict[str, str]:
    """File name -> report path (``<report_dir>/<category dir>/<name>``, as the report registers them)
    of every CSV and PNG under ``report_dir`` (first one of a name wins; ``skip`` = directories left
    out)."""
    root = Path(report_dir)
    out: dict[str, str] = {}
    if not root.is_dir():
        return out
    for d in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in skip):
        for f in sorted(d.iterdir()):
            if f.suffix in (".csv", ".png") and f.name not in out:
                out[f.name] = str(Path(report_dir) / d.name / f.name)
    return out


def claim_links(row: Mapping, files: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(kind "table" | "figure", label, report path) of a claim: the table its ``evidence`` names
    (``results/<name>.csv``), the per-run interval table of an ESS table (``<t>_claims_ci.csv``), the
    figure of the same name and :data:`EXTRA_FIGURES`; only files in ``files``. A claim whose evidence
    names no table links to the claims table itself."""
    out = []
    m = re.search(r"results/([A-Za-z0-9_.-]+)\.csv", _txt(row.get("evidence")))
    stem = m.group(1) if m else None
    if stem and f"{stem}.csv" in files:
        out.append(("table", "table", files[f"{stem}.csv"]))
        if stem.endswith("_ess") and f"{stem[:-4]}_claims_ci.csv" in files and _txt(row.get("ci_low")):
            out.append(("table", "intervals", files[f"{stem[:-4]}_claims_ci.csv"]))
    elif "claims.csv" in files:
        out.append(("table", "claims", files["claims.csv"]))
    figs = ([f"{stem}.png"] if stem else []) + list(EXTRA_FIGURES.get(stem or "", ()))
    for k, f in enumerate(x for x in figs if x in files):
        out.append(("figure", "figure" if k == 0 else f"figure {k + 1}", files[f]))
    return out


def status_of(row: Mapping) -> str:
    """holds / fails / tie / not_run of a claims row (its ``verdict`` text, else ``holds``)."""
    v = _txt(row.get("verdict")).lower()
    held = _holds(row.get("holds"))
    if held is None or v.startswith("not run") or _txt(row.get("measured")) == "not run":
        return "not_run"
    if v.startswith("a tie"):
        return "tie"
    return "holds" if held else "fails"


def verdict_of(row: Mapping) -> str:
    """The verdict text: the row's ``verdict``, else its ``holds`` said in words (no interval)."""
    v = _txt(row.get("verdict"))
    if v:
        return v
    st = status_of(row)
    if st == "not_run":  # say why: a "holds" that is not a verdict ("n/a (quick)"), else the evidence
        why = _txt(row.get("holds")) or _txt(row.get("evidence"))
        return "not run" + (f" ({why})" if why else "")
    return f"{STATUS[st]} (one measurement, no interval)"


def claim_text(row: Mapping) -> str:
    """The claim in a few words: "<setting>, acceptance <rate>: <short claim>" for the exact-minibatch
    ESS/s claims (median ESS/s), else the row's statement."""
    cid = _txt(row.get("claim_id"))
    if cid in EVERY_RATE:
        return f"truncated Gaussian, every rate: {SHORT[EVERY_RATE[cid]]}"
    m = re.fullmatch(r"exact_mh\.([A-Za-z0-9_]+)\.([a-z_]+)\.r([0-9.]+)", cid)
    if m and m.group(2) in SHORT:
        return f"{SETTING.get(m.group(1), m.group(1))}, acceptance {m.group(3)}: {SHORT[m.group(2)]}"
    return _txt(row.get("statement"))


def verdict_detail(row: Mapping) -> str:
    """The verdict text after its status word ("x1.30 [1.24, 1.36], 96/100 runs"), for the badge."""
    v, st = verdict_of(row), status_of(row)
    word = "a tie within the interval:" if st == "tie" else STATUS[st]
    if v.startswith(word):
        v = v[len(word) :].strip()
        if v.startswith("(") and v.endswith(")"):
            v = v[1:-1]
    return v


def ours_of(row: Mapping) -> str:
    """Our number: the ratio (``value``) where the paper's is a ratio too ("x.."), else ``measured``."""
    value, pv = _num(row.get("value")), _txt(row.get("paper_value"))
    if math.isfinite(value) and pv.startswith("x"):
        return f"x{value:.0f}" if abs(value) >= 100 else f"x{value:.2f}"
    return _txt(row.get("measured")) or "-"


def _js_str(s: str) -> str:
    if "'" in s or "\\" in s:
        raise ValueError(f"report path {s!r} cannot be quoted")
    return f"'{s}'"


def _link(kind: str, label: str, path: str, live: bool) -> str:
    if not live:
        return f'<span title="{html.escape(path)}">{html.escape(label)}</span>'
    p = _js_str(path)
    if kind == "figure":  # show the image itself (the report's own view), else the entry's page
        js = (
            f"void((typeof results!=='undefined'&&results[{p}])?app.setView({{navbarMode:'resultinfo',"
            f"content:'img',contentPath:results[{p}].data_uri,resultPath:{p}}}):app.showResultInfo({p}))"
        )
    else:
        js = f"void(app.showResultInfo({p}))"
    return f'<a href="javascript:{html.escape(js)}" data-path="{html.escape(path)}">{html.escape(label)}</a>'


def _clip(s: str, n: int = 110) -> str:
    """HTML of ``s`` cut to ``n`` characters (the whole text in the title)."""
    if len(s) <= n:
        return html.escape(s)
    return f'<span title="{html.escape(s)}">{html.escape(s[: n - 1].rstrip())}&hellip;</span>'


def counts(claims: pd.DataFrame) -> dict[str, int]:
    c = {k: 0 for k in STATUS}
    for _, r in claims.iterrows():
        c[status_of(r)] += 1
    return c


def render(claims: pd.DataFrame, files: Mapping[str, str], live: bool = True) -> str:
    """The summary as an HTML fragment (``<style>`` + ``<div id="claims-summary">``): one row per claims
    row, grouped by paper in the order the papers first appear; ``live`` = links that open the report's
    entries (the report's first page), else the file names only."""
    c = counts(claims)
    lead = (
        f"{len(claims)} claims: <span class='v holds'>{c['holds']} hold</span> "
        f"<span class='v fails'>{c['fails']} do not hold</span> "
        f"<span class='v tie'>{c['tie']} ties within the interval</span> "
        f"<span class='v not_run'>{c['not_run']} not run</span>"
    )
    legend = (
        "x = the ratio a verdict compares with its threshold (1 unless stated): worst minibatch / best "
        "full-batch median ESS/s; for the top two, the lower of Poisson-MALA's and Poisson-Barker's median "
        "ESS/s / the best other method's; for SGLD's KS, SGLD's / the Poisson methods' max KS. [low, high] "
        f"= 95 % bootstrap percentile interval over runs ({BOOT_TEXT}); k/n runs = single runs in which "
        "the claim holds. A tie within the interval: the interval contains the threshold. Claims without "
        "an interval are single measurements or per-setting verdicts (MNIST: one chain per setting)."
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("Artifact", "Claim", "Ours", "Paper", "Verdict: ratio [95 % interval], runs held", "Links")
    )
    body = []
    order = []
    rows = []
    for _, r in claims.iterrows():
        who, art = paper_and_artifact(r.get("paper"), r.get("statement"), r.get("evidence"))
        if who not in order:
            order.append(who)
        rows.append((who, art, r))
    for who in order:
        mine = [(a, r) for w, a, r in rows if w == who]
        cc = counts(pd.DataFrame([r for _, r in mine]))
        body.append(
            f"<tr class='paper'><td colspan='6'>{html.escape(who)} "
            f"<span class='small'>{len(mine)} claims: {cc['holds']} hold, {cc['fails']} do not, "
            f"{cc['tie']} ties, {cc['not_run']} not run</span></td></tr>"
        )
        for art, r in mine:
            st = status_of(r)
            links = " ".join(_link(k, lab, p, live) for k, lab, p in claim_links(r, files)) or "-"
            body.append(
                "<tr>"
                f"<td>{html.escape(art)}</td>"
                f"<td class='claim' title='{html.escape(_txt(r.get('claim_id')))}'>"
                f"<span title='{html.escape(_txt(r.get('statement')))}'>"
                f"{_clip(claim_text(r), 120)}</span></td>"
                f"<td class='num'>{_clip(ours_of(r), 48)}</td>"
                f"<td class='num'>{_clip(_txt(r.get('paper_value')) or '-', 40)}</td>"
                f"<td class='verdict'><span class='v {st}'>{html.escape(STATUS[st])}</span> "
                f"{html.escape(verdict_detail(r))}</td>"
                f"<td class='links'>{links}</td>"
                "</tr>"
            )
    cols = "".join(f"<col style='width:{w}%'>" for w in (7, 35, 14, 12, 26, 6))
    return (
        f"<style>{CSS}</style>\n<div id='claims-summary'>\n<h2>Claims at a glance</h2>\n"
        f"<p>{lead}</p>\n<p class='small'>{html.escape(legend)}</p>\n"
        f"<table><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead><tbody>\n"
        + "\n".join(body)
        + "\n</tbody></table>\n</div>\n"
    )


def render_empty(reason: str) -> str:
    return (
        f"<style>{CSS}</style>\n<div id='claims-summary'>\n<h2>Claims at a glance</h2>\n"
        f"<p><span class='v not_run'>not run</span> {html.escape(reason)}</p>\n</div>\n"
    )


def standalone(fragment: str) -> str:
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><title>Claims at a glance</title>"
        "</head><body style='font-family: system-ui, sans-serif; margin: 12px'>\n"
        + fragment
        + "</body></html>\n"
    )


def _atomic_write(path: str | os.PathLike, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", default="results/claims.csv")
    ap.add_argument("--report-dir", default="results/report")
    ap.add_argument("--fragment", required=True, help="HTML fragment for the report's first page")
    ap.add_argument("--standalone", default=None, help="complete HTML page without links")
    a = ap.parse_args(argv)
    files = report_files(a.report_dir)
    p = Path(a.claims)
    if p.is_file() and p.stat().st_size > 0:
        claims = pd.read_csv(p, keep_default_na=False, dtype=str)
        live, dead = render(claims, files, True), render(claims, files, False)
        print(f"claims summary: {len(claims)} claims, {len(files)} report files", file=sys.stderr)
    else:
        live = dead = render_empty(f"no claims table ({p}): the verify step did not write one")
    _atomic_write(a.fragment, live)
    if a.standalone:
        _atomic_write(a.standalone, standalone(dead))
    return 0


if __name__ == "__main__":
    sys.exit(main())
