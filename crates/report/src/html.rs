//! Self-contained HTML pages (the shell every page shares: `run_page`, `elastic_page` and
//! `experiment_page` fill it): tables, banners and interactive charts (Chart.js and its zoom plugin,
//! inlined from `assets/` with their licences there: no network when the page opens). Each chart's
//! data is also a CSV link (a data: URL) and, on request, a file.

use base64::Engine;
use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::chart::{Chart, Kind, Series};

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

/// A section of a page. Its HTML is maud's `Markup`: every value in it went through maud's
/// escaping, so no text of a result (a cell name, an error message) can become markup.
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub heading: String,
    /// Placed before the charts (tables, notes).
    pub html: Markup,
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
            PreEscaped(
                js.lines()
                    .filter(|l| !l.starts_with("//# sourceMappingURL="))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        };
        let page = html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width";
                    title { (self.title) }
                    style { (PreEscaped(CSS)) }
                    script { (library(CHART_JS)) }
                    script { (library(ZOOM_JS)) }
                }
                body {
                    h1 { (self.title) }
                    @for b in &self.banners {
                        div class="banner" role="alert" { (b) }
                    }
                    noscript {
                        p class="note" { "The charts need JavaScript; their data is in the CSV links." }
                    }
                    @for s in &self.sections {
                        section {
                            h2 { (s.heading) }
                            (s.html)
                            @for c in s.charts.iter().filter(|c| !c.is_empty()) {
                                (figure(c))
                            }
                        }
                    }
                    script { (PreEscaped(REPORT_JS)) }
                }
            }
        };
        page.into_string()
    }
}

/// A chart's figure: its canvas, its data as JSON for the page's script, its CSV as a link.
fn figure(c: &Chart) -> Markup {
    let csv = base64::engine::general_purpose::STANDARD.encode(c.csv());
    html! {
        figure class="chart" id=(c.id) {
            div class="box" { canvas {} }
            // JSON with '<' escaped: safe inside a script element.
            script type="application/json" { (PreEscaped(c.json())) }
            figcaption {
                a download={ (c.id) ".csv" } href={ "data:text/csv;base64," (csv) } { "data (CSV)" }
                @if c.kind == Kind::Bars {
                    " · hover for values, click a legend entry to hide it"
                } @else {
                    " · hover for values, drag across a range to zoom (double-click resets), click a legend entry to hide it"
                }
            }
        }
    }
}

const CSS: &str = "body{font-family:sans-serif;margin:24px auto;padding:0 24px;color:#222;max-width:1200px}\
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}\
th{background:#f4f4f4}td.l,th.l,table.kv td,table.kv th{text-align:left}figure{margin:16px 0;width:100%}figcaption{font-size:12px;color:#555}\
figure .box{position:relative;width:100%;height:360px}p.note{font-size:13px}\
.banner{border:2px solid #c62828;background:#fdecea;color:#8e0000;padding:10px 14px;margin:12px 0;font-weight:bold;border-radius:4px}";

/// A note under a section's heading: a paragraph of text (escaped as all text is).
pub fn note(text: &str) -> Markup {
    html! { p class="note" { (text) } }
}

/// An HTML table. The first column is left-aligned, as is every column of text.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> Markup {
    // Numbers are read from the right, text from the left: a column is numeric when each of its
    // cells starts as a number does (or is empty or "-") and one at least is a number (a column
    // with none, such as a flag no row has, is text); the first column names the row.
    fn cell(row: &[String], i: usize) -> &str {
        row.get(i).map_or("", |c| c.trim())
    }
    let is_number = |c: &str| {
        c.trim_start_matches(['-', '+', '±'])
            .starts_with(|ch: char| ch.is_ascii_digit())
    };
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| {
            i > 0
                && rows.iter().any(|r| is_number(cell(r, i)))
                && rows.iter().all(|r| {
                    let c = cell(r, i);
                    c.is_empty() || c == "-" || is_number(c)
                })
        })
        .collect();
    let class = |i: usize| (!numeric.get(i).copied().unwrap_or(false)).then_some("l");
    // Two columns are a name and its value: text, read from the left.
    let kv = (header.len() == 2).then_some("kv");
    html! {
        table class=[kv] {
            tr {
                @for (i, h) in header.iter().enumerate() {
                    th class=[class(i)] { (h) }
                }
            }
            @for r in rows {
                tr {
                    @for (i, c) in r.iter().enumerate() {
                        td class=[class(i)] { (c) }
                    }
                }
            }
        }
    }
}

/// A figure to 4 significant digits (0.0123, 1.234, 1234): the page's figures are read, not
/// recomputed; the result file keeps every digit.
pub fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 44: every value reaches the page through maud's escaping: a cell name, a banner, a
    /// heading or a chart id that looks like markup stays text.
    #[test]
    fn text_of_a_result_never_becomes_markup() {
        let hostile = "<img src=x onerror=alert(1)>&\"";
        let mut chart = Chart::new(hostile, hostile, "x", "y");
        chart
            .series
            .push(Series::new(hostile, vec![(0.0, 1.0), (1.0, 2.0)]));
        let page = Page {
            title: hostile.into(),
            banners: vec![hostile.into()],
            sections: vec![Section {
                heading: hostile.into(),
                html: html! {
                    (note(hostile))
                    (table(&[hostile, "n"], &[vec![hostile.into(), "1".into()]]))
                },
                charts: vec![chart],
            }],
        }
        .html();
        assert!(!page.contains("<img"), "{page}");
        let escaped = page
            .matches("&lt;img src=x onerror=alert(1)&gt;&amp;")
            .count();
        // Title, heading 1, banner, heading 2, note, header cell, row cell, the figure's id twice
        // (as an attribute) and its file name.
        assert!(escaped >= 7, "{escaped} escaped in {page}");
        // In the chart's JSON the '<' is a JSON escape: no tag can start inside the script.
        assert!(page.contains("\\u003cimg src=x"), "{page}");
        assert!(page.starts_with("<!DOCTYPE html><html lang=\"en\">"));
    }

    #[test]
    fn tables_align_numbers_right_and_text_left() {
        let t = table(
            &["cell", "n", "notes"],
            &[vec!["a".into(), "12".into(), "fine".into()]],
        )
        .into_string();
        assert_eq!(
            t,
            "<table><tr><th class=\"l\">cell</th><th>n</th><th class=\"l\">notes</th></tr>\
             <tr><td class=\"l\">a</td><td>12</td><td class=\"l\">fine</td></tr></table>"
        );
        // A column with no number in it is text, even when every cell is empty or "-" (the
        // resources table's "client" when no run was client-bound).
        let blank = table(
            &["run", "bounded by", "client"],
            &[vec!["a".into(), "-".into(), String::new()]],
        )
        .into_string();
        assert!(
            blank.contains("<th class=\"l\">bounded by</th><th class=\"l\">client</th>"),
            "{blank}"
        );
        let kv = table(&["figure", "value"], &[]).into_string();
        assert!(kv.starts_with("<table class=\"kv\">"), "{kv}");
    }
}
