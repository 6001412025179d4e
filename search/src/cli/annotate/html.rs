//! The page `copper annotate --html` writes: one self-contained HTML file
//! (no network, no external files) with, for each kernel, its bounds, the
//! lint's findings as links to their lines, a plot of the bound against
//! simulated costs at several sizes, and the annotated source with hot
//! lines shaded and each finding under its line. A small script marks the
//! line a clicked finding points to, and records script errors in
//! `window.copperErrors` (the browser test reads it).

use std::fmt::Write as _;

use super::{bound_text, num, Annotation};
use copper_search::driver::annotate::plot::{Plot, PlotError};
use copper_search::driver::annotate::rewrite::Rewrite;

/// One kernel's part of the page.
pub(super) struct KernelPage {
    /// The annotated source and bounds.
    pub annotation: Annotation,
    /// The lint's findings.
    pub findings: Vec<PageFinding>,
    /// The plot, or why there is none.
    pub plot: Result<Plot, PlotError>,
    /// The best rewrite found, when one was.
    pub rewrite: Option<Rewrite>,
}

/// A finding, placed.
pub(super) struct PageFinding {
    /// Its line, when it lies in the kernel's lines.
    pub line: Option<usize>,
    /// `file:line:col`.
    pub place: String,
    /// `warning`, `error` or `note`.
    pub severity: String,
    /// The lint code.
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// The suggested fix, when one is known.
    pub help: Option<String>,
}

/// The whole page for the kernels of `file`.
pub(super) fn page(file: &str, kernels: &[KernelPage]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>copper annotate: {}</title>\n<script>{ERRORS}</script>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(file),
        esc(file)
    );
    if kernels.is_empty() {
        out.push_str("<p>No kernel could be annotated (see the messages copper printed).</p>\n");
    }
    for (i, k) in kernels.iter().enumerate() {
        kernel_section(&mut out, i, k);
    }
    let _ = write!(out, "<script>{SELECT}</script>\n</body>\n</html>\n");
    out
}

/// Records script errors before anything else runs.
const ERRORS: &str = "window.copperErrors=[];window.addEventListener('error',function(e){window.copperErrors.push(String(e.message));});";

/// Marks the line a finding points to (on click, on a changed hash, and
/// for the hash the page was opened with).
const SELECT: &str = r#"
function copperSelect(id) {
  document.querySelectorAll('tr.selected').forEach(function (r) { r.classList.remove('selected'); });
  var row = document.getElementById(id);
  if (row) { row.classList.add('selected'); row.scrollIntoView({block: 'center'}); }
}
document.addEventListener('click', function (e) {
  var a = e.target.closest('a.finding');
  if (a) { copperSelect(a.getAttribute('href').slice(1)); }
});
window.addEventListener('hashchange', function () { copperSelect(location.hash.slice(1)); });
if (location.hash) { copperSelect(location.hash.slice(1)); }
"#;

const STYLE: &str = r#"
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.15em; margin-top: 2em; }
table.bounds td, table.bounds th { padding: 0.15em 0.8em; text-align: left; }
table.bounds td.n { text-align: right; font-variant-numeric: tabular-nums; }
ul.findings li { margin: 0.2em 0; }
.sev-warning { color: #8a4b00; } .sev-error { color: #a00; } .sev-note { color: #225; }
table.source { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 0.85em; }
table.source td { padding: 0 0.6em; white-space: pre; }
table.source td.n { text-align: right; color: #444; font-variant-numeric: tabular-nums; }
table.source td.ln { color: #888; text-align: right; border-right: 1px solid #ccc; }
table.source tr.selected td, table.source tr:target td { outline: 2px solid #1a5fd0; }
tr.finding-row td { white-space: normal; font-family: system-ui, sans-serif; padding: 0.1em 0.6em 0.3em 2em; }
svg.plot { border: 1px solid #ddd; background: #fff; }
svg.plot polyline.bound { fill: none; stroke: #1a5fd0; stroke-width: 2; }
svg.plot circle.sim { fill: #d04a1a; }
svg.plot text { font-size: 11px; fill: #333; }
pre.diff { background: #f7f7f7; padding: 0.6em; font-size: 0.85em; }
pre.diff .add { color: #065f00; background: #e6ffe6; } pre.diff .del { color: #8a0000; background: #ffe8e8; }
pre.diff .hunk { color: #555; }
"#;

/// One kernel's section: bounds, findings, plot, source, rewrite.
fn kernel_section(out: &mut String, i: usize, k: &KernelPage) {
    let a = &k.annotation;
    let _ = write!(
        out,
        "<section class=\"kernel\" id=\"k{i}\">\n<h2><code>{}</code> ({}), grid {}, block {}</h2>\n",
        esc(&a.kernel),
        esc(&a.place),
        a.grid,
        a.block
    );
    for x in &a.assumptions {
        let _ = writeln!(out, "<p class=\"assumption\">{}</p>", esc(x));
    }
    out.push_str("<table class=\"bounds\"><tr><th>metric</th><th>bound per warp</th><th>simulated worst warp</th><th>all warps</th></tr>\n");
    for m in &a.metrics {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&m.name),
            esc(&bound_text(m)),
            num(m.worst_warp),
            num(m.total)
        );
    }
    out.push_str("</table>\n");
    findings_list(out, i, &k.findings);
    match &k.plot {
        Ok(p) => plot_svg(out, p),
        Err(why) => {
            let _ = writeln!(
                out,
                "<p class=\"no-plot\">No plot: {}.</p>",
                esc(&why.to_string())
            );
        }
    }
    source_table(out, &format!("k{i}"), a, &k.findings);
    match &k.rewrite {
        Some(r) => rewrite_part(out, i, a, r),
        None => out.push_str(
            "<p class=\"no-rewrite\">No rewrite found that the bounds rank better.</p>\n",
        ),
    }
    out.push_str("</section>\n");
}

/// The findings, each a link to its line.
fn findings_list(out: &mut String, i: usize, findings: &[PageFinding]) {
    if findings.is_empty() {
        out.push_str("<p class=\"findings\">No lint findings.</p>\n");
        return;
    }
    let _ = writeln!(
        out,
        "<h3>{} finding{}</h3>\n<ul class=\"findings\">",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" }
    );
    for f in findings {
        let label = format!("{}: {}[{}]: {}", f.place, f.severity, f.code, f.message);
        match f.line {
            Some(line) => {
                let _ = writeln!(
                    out,
                    "<li class=\"sev-{}\"><a class=\"finding\" href=\"#k{i}-L{line}\">{}</a></li>",
                    esc(&f.severity),
                    esc(&label)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "<li class=\"sev-{}\">{}</li>",
                    esc(&f.severity),
                    esc(&label)
                );
            }
        }
    }
    out.push_str("</ul>\n");
}

/// The rewrite: what was applied, the diff, the bounds before and after,
/// and the rewritten source annotated.
fn rewrite_part(out: &mut String, i: usize, before: &Annotation, r: &Rewrite) {
    out.push_str("<section class=\"rewrite\">\n<h3>Rewrite</h3>\n<ul class=\"applied\">\n");
    for a in &r.applied {
        let _ = writeln!(out, "<li>{}</li>", esc(a));
    }
    for n in &r.notes {
        let _ = writeln!(out, "<li class=\"note\">note: {}</li>", esc(n));
    }
    out.push_str("</ul>\n<pre class=\"diff\">");
    for line in r.diff.lines() {
        let class = match line.chars().next() {
            Some('+') if !line.starts_with("+++") => "add",
            Some('-') if !line.starts_with("---") => "del",
            Some('@') => "hunk",
            _ => "ctx",
        };
        let _ = writeln!(out, "<span class=\"{class}\">{}</span>", esc(line));
    }
    out.push_str("</pre>\n<table class=\"bounds\"><tr><th>metric</th><th>bound per warp before</th><th>after</th><th>simulated worst warp before</th><th>after</th></tr>\n");
    for (b, a) in before.metrics.iter().zip(&r.annotation.metrics) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&b.name),
            esc(&bound_text(b)),
            esc(&bound_text(a)),
            num(b.worst_warp),
            num(a.worst_warp)
        );
    }
    out.push_str("</table>\n<h4>The rewritten kernel</h4>\n");
    source_table(out, &format!("k{i}r"), &r.annotation, &[]);
    out.push_str("</section>\n");
}

/// The source with costs per line, hot lines shaded, findings under
/// their lines; rows are named `{prefix}-L{line}`.
fn source_table(out: &mut String, prefix: &str, a: &Annotation, findings: &[PageFinding]) {
    let hottest = a
        .lines
        .iter()
        .filter_map(|l| l.costs.as_ref().and_then(|c| a.share(c)))
        .fold(0.0f64, f64::max);
    let columns = a.metrics.len() + 3;
    out.push_str("<table class=\"source\">\n<tr>");
    for m in &a.metrics {
        let _ = write!(out, "<th>{}</th>", esc(&m.name));
    }
    out.push_str("<th>share</th><th>line</th><th></th></tr>\n");
    for l in &a.lines {
        let share = l.costs.as_ref().and_then(|c| a.share(c));
        let shade = match share {
            Some(s) if hottest > 0.0 && s > 0.0 => format!(
                " style=\"background: rgba(230, 90, 30, {:.2})\"",
                0.08 + 0.5 * s / hottest
            ),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "<tr id=\"{prefix}-L{}\" class=\"line\"{shade}>",
            l.number
        );
        match &l.costs {
            Some(c) => {
                for x in c {
                    let _ = write!(out, "<td class=\"n\">{}</td>", num(*x));
                }
            }
            None => out.push_str(&"<td></td>".repeat(a.metrics.len())),
        }
        let share = share.map_or(String::new(), |s| format!("{s:.1}%"));
        let _ = writeln!(
            out,
            "<td class=\"n\">{share}</td><td class=\"ln\">{}</td><td>{}</td></tr>",
            l.number,
            esc(&l.text)
        );
        for f in findings.iter().filter(|f| f.line == Some(l.number)) {
            let help = f
                .help
                .as_ref()
                .map_or(String::new(), |h| format!(" <em>help: {}</em>", esc(h)));
            let _ = writeln!(
                out,
                "<tr class=\"finding-row sev-{}\"><td colspan=\"{columns}\">{}[{}]: {}{help}</td></tr>",
                esc(&f.severity),
                esc(&f.severity),
                esc(&f.code),
                esc(&f.message)
            );
        }
    }
    if let Some(c) = &a.elsewhere {
        out.push_str("<tr class=\"line\">");
        for x in c {
            let _ = write!(out, "<td class=\"n\">{}</td>", num(*x));
        }
        let share = a.share(c).map_or(String::new(), |s| format!("{s:.1}%"));
        let _ = writeln!(
            out,
            "<td class=\"n\">{share}</td><td class=\"ln\"></td><td>(code from headers or macro definitions)</td></tr>"
        );
    }
    out.push_str("</table>\n");
}

/// Width and height of the plot, and its margin for the axes' labels.
const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 300.0;
const MARGIN: f64 = 48.0;

/// The bound's curve and the simulated points, as an inline SVG.
fn plot_svg(out: &mut String, p: &Plot) {
    let xs = p.curve.iter().chain(&p.simulated).map(|q| q.0);
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let y1 = p
        .curve
        .iter()
        .chain(&p.simulated)
        .map(|q| q.1)
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.05;
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    let sx = |x: f64| MARGIN + (x - x0) / (x1 - x0) * (WIDTH - 2.0 * MARGIN);
    let sy = |y: f64| HEIGHT - MARGIN - y / y1 * (HEIGHT - 2.0 * MARGIN);
    let _ = writeln!(
        out,
        "<h3>{} per warp against <code>{}</code></h3>\n<p>Bound <code>{}</code> (line) and the worst warp simulated (points), every other argument as annotated.</p>",
        esc(&p.metric),
        esc(&p.size),
        esc(&p.bound.to_string())
    );
    let _ = writeln!(
        out,
        "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\">"
    );
    let (left, bottom, right, top) = (MARGIN, HEIGHT - MARGIN, WIDTH - MARGIN, MARGIN);
    let _ = writeln!(
        out,
        "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"#888\"/><line x1=\"{left}\" y1=\"{bottom}\" x2=\"{left}\" y2=\"{top}\" stroke=\"#888\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{left}\" y=\"{:.1}\">{}</text><text x=\"{right}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        bottom + 16.0,
        num(x0),
        bottom + 16.0,
        num(x1),
        WIDTH / 2.0,
        bottom + 32.0,
        esc(&p.size)
    );
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{bottom}\" text-anchor=\"end\">0</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
        left - 4.0,
        left - 4.0,
        top + 4.0,
        num((y1 / 1.05).round())
    );
    let points: Vec<String> = p
        .curve
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
        .collect();
    let _ = writeln!(
        out,
        "<polyline class=\"bound\" points=\"{}\"><title>bound</title></polyline>",
        points.join(" ")
    );
    for &(x, y) in &p.simulated {
        let _ = writeln!(
            out,
            "<circle class=\"sim\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" data-size=\"{x}\" data-cost=\"{y}\"><title>{} = {}: simulated {}</title></circle>",
            sx(x),
            sy(y),
            esc(&p.size),
            num(x),
            num(y)
        );
    }
    out.push_str("</svg>\n");
    for (x, why) in &p.skipped {
        let s = format!("{} = {}: {why}", p.size, num(*x));
        let _ = writeln!(out, "<p class=\"skipped\">Not simulated: {}</p>", esc(&s));
    }
}

/// `text` with HTML's special characters escaped.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
