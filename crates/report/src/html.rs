//! Self-contained HTML pages (the shell every page shares: `run_page`, `elastic_page` and
//! `experiment_page` fill it): tables, banners and interactive charts (Chart.js and its zoom plugin,
//! inlined from `assets/` with their licences there: no network when the page opens). Each chart's
//! data is also a CSV link (a data: URL) and, on request, a file.

use std::fmt::Write;

use base64::Engine;

use crate::chart::{esc, Chart, Kind, Series};

/// Chart.js 4.6.1 and chartjs-plugin-zoom 2.2.0 as published on npm (assets/README.md).
const CHART_JS: &str = include_str!("../assets/chart.umd.min.js");
const ZOOM_JS: &str = include_str!("../assets/chartjs-plugin-zoom.min.js");
/// Draws every `figure.chart` of the page from its JSON.
const REPORT_JS: &str = include_str!("../assets/report.js");

/// A page: sections of text, tables and charts.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub title: String,
    /// Shown above everything: what makes the figures below misleading if overlooked.
    pub banners: Vec<String>,
    pub sections: Vec<Section>,
}

#[derive(Debug, Clone, Default)]
pub struct Section {
    pub heading: String,
    /// HTML placed before the charts (tables, notes), already escaped.
    pub html: String,
    pub charts: Vec<Chart>,
}

impl Page {
    /// The charts of the page, for CSV files.
    pub fn charts(&self) -> impl Iterator<Item = &Chart> {
        self.sections.iter().flat_map(|s| s.charts.iter())
    }

    pub fn html(&self) -> String {
        // The libraries' source maps are not shipped: no reference to a file that is not there.
        let library = |js: &str| {
            js.lines()
                .filter(|l| !l.starts_with("//# sourceMappingURL="))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut out = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{CSS}</style>\n<script>{}</script>\n<script>{}</script>\n</head><body><h1>{}</h1>\n",
            esc(&self.title),
            library(CHART_JS),
            library(ZOOM_JS),
            esc(&self.title)
        );
        for b in &self.banners {
            let _ = writeln!(out, "<div class=\"banner\" role=\"alert\">{}</div>", esc(b));
        }
        out.push_str("<noscript><p class=\"note\">The charts need JavaScript; their data is in the CSV links.</p></noscript>\n");
        for s in &self.sections {
            let _ = writeln!(out, "<section><h2>{}</h2>\n{}", esc(&s.heading), s.html);
            for c in s.charts.iter().filter(|c| !c.is_empty()) {
                let csv = base64::engine::general_purpose::STANDARD.encode(c.csv());
                let _ = writeln!(
                    out,
                    "<figure class=\"chart\" id=\"{}\"><div class=\"box\"><canvas></canvas></div><script type=\"application/json\">{}</script><figcaption><a download=\"{}.csv\" href=\"data:text/csv;base64,{csv}\">data (CSV)</a>{}</figcaption></figure>",
                    esc(&c.id),
                    c.json(),
                    esc(&c.id),
                    if c.kind == Kind::Bars {
                        " · hover for values, click a legend entry to hide it"
                    } else {
                        " · hover for values, drag across a range to zoom (double-click resets), click a legend entry to hide it"
                    }
                );
            }
            out.push_str("</section>\n");
        }
        let _ = writeln!(out, "<script>{REPORT_JS}</script>\n</body></html>");
        out
    }
}

const CSS: &str = "body{font-family:sans-serif;margin:24px auto;padding:0 24px;color:#222;max-width:1200px}\
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}\
th{background:#f4f4f4}td.l,th.l,table.kv td,table.kv th{text-align:left}figure{margin:16px 0;width:100%}figcaption{font-size:12px;color:#555}\
figure .box{position:relative;width:100%;height:360px}p.note{font-size:13px}\
.banner{border:2px solid #c62828;background:#fdecea;color:#8e0000;padding:10px 14px;margin:12px 0;font-weight:bold;border-radius:4px}";

/// An HTML table; cells are escaped. The first column is left-aligned.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    // Numbers are read from the right, text from the left: a column is numeric when each of its
    // cells starts as a number does (or is empty or "-"); the first column names the row.
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| {
            i > 0
                && rows.iter().all(|r| {
                    let c = r.get(i).map_or("", |c| c.trim());
                    c.is_empty()
                        || c == "-"
                        || c.trim_start_matches(['-', '+', '±'])
                            .starts_with(|ch: char| ch.is_ascii_digit())
                })
        })
        .collect();
    let class = |i: usize| {
        if numeric.get(i).copied().unwrap_or(false) {
            ""
        } else {
            " class=\"l\""
        }
    };
    // Two columns are a name and its value: text, read from the left.
    let mut t = String::from(if header.len() == 2 {
        "<table class=\"kv\"><tr>"
    } else {
        "<table><tr>"
    });
    for (i, h) in header.iter().enumerate() {
        let _ = write!(t, "<th{}>{}</th>", class(i), esc(h));
    }
    t.push_str("</tr>");
    for r in rows {
        t.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let _ = write!(t, "<td{}>{}</td>", class(i), esc(c));
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    t
}

/// A name fit for an element id.
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// A bar chart of one value per category with 95% confidence intervals.
pub fn bars(id: &str, title: &str, y_label: &str, rows: &[(String, f64, f64)]) -> Chart {
    let mut c = Chart::new(id, title, "cell", y_label);
    c.kind = Kind::Bars;
    c.categories = rows.iter().map(|r| r.0.clone()).collect();
    c.error_label = format!("{y_label} 95% CI half-width");
    c.series.push(Series {
        errors: rows.iter().map(|r| r.2).collect(),
        ..Series::new(
            y_label,
            rows.iter()
                .enumerate()
                .map(|(i, r)| (i as f64, r.1))
                .collect(),
        )
    });
    c
}
