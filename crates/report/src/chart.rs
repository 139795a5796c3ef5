//! Charts as data: series of points with axes, legend, shaded ranges and event markers. The page
//! draws them with Chart.js (kept in `assets/`, inlined into every report, so a report opens
//! anywhere, offline); every chart also gives its data as CSV.

use std::fmt::Write;

use scalebench_measure::quantile_us;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    Linear,
    Log10,
    /// Percentiles (0..1) spread as -log10(1 - q): 90%, 99%, 99.9% ... equally apart.
    Percentile,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Lines,
    Points,
    /// One bar per category (x = category index) per series, with optional error bars.
    Bars,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Bars: half-widths of the error bars (e.g. a 95% confidence interval), one per point.
    pub errors: Vec<f64>,
    /// What each point is (a scatter's cell or swept value), shown when it is hovered and kept
    /// in the CSV's `label` column; empty: the series' name says it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    /// Unique in the report; names the CSV file.
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub kind: Kind,
    pub series: Vec<Series>,
    /// Bars: the category names, in x order.
    pub categories: Vec<String>,
    /// Shaded x ranges with a label (warm-up, transition).
    pub bands: Vec<(f64, f64, String)>,
    /// Vertical markers with a label (events).
    pub markers: Vec<(f64, String)>,
    /// Draw the diagonal y = x (dashed), both axes spanning the same range.
    pub diagonal: bool,
}

impl Chart {
    pub fn new(id: &str, title: &str, x_label: &str, y_label: &str) -> Chart {
        Chart {
            id: id.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            kind: Kind::Lines,
            series: Vec::new(),
            categories: Vec::new(),
            bands: Vec::new(),
            markers: Vec::new(),
            diagonal: false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    /// The chart's data: one row per point, `series,x,y[,error]` (bars: the category as x).
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let bars = self.kind == Kind::Bars;
        let labelled = self.series.iter().any(|s| !s.labels.is_empty());
        let _ = writeln!(
            out,
            "series,{},{}{}{}",
            csv_field(&self.x_label),
            csv_field(&self.y_label),
            if bars { ",error" } else { "" },
            if labelled { ",label" } else { "" }
        );
        for s in &self.series {
            for (i, (x, y)) in s.points.iter().enumerate() {
                let x = if bars {
                    csv_field(self.categories.get(*x as usize).map_or("", String::as_str))
                } else {
                    x.to_string()
                };
                let _ = write!(out, "{},{x},{y}", csv_field(&s.name));
                if bars {
                    let _ = write!(out, ",{}", s.errors.get(i).copied().unwrap_or(0.0));
                }
                if labelled {
                    let _ = write!(
                        out,
                        ",{}",
                        csv_field(s.labels.get(i).map_or("", String::as_str))
                    );
                }
                out.push('\n');
            }
        }
        out
    }

    /// The chart as the page's script reads it: JSON safe inside a `<script>` element.
    pub fn json(&self) -> String {
        serde_json::to_string(self)
            .expect("a chart serializes")
            .replace('<', "\\u003c")
    }
}

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A text field of a CSV file: quoted when it holds a separator, a quote or a line break, and
/// prefixed with `'` when a spreadsheet would take it for a formula (`=`, `+`, `-`, `@` first:
/// a cell name or an error text is data, never something to run).
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A histogram's values (us) at percentiles spread evenly on the percentile axis (0, 90, 99, 99.9 ...
/// as far as the samples reach), ending at the maximum, drawn at the largest sample's percentile
/// (1 - 1/n): the axis cannot show 100%.
pub(crate) fn percentile_points(h: &scalebench_measure::LatencyHistogram) -> Vec<(f64, f64)> {
    let n = h.len() as f64;
    let mut points: Vec<(f64, f64)> = (0..=24)
        .map(|k| 1.0 - 10f64.powf(-(k as f64) / 4.0))
        .filter(|q| (1.0 - q) * n > 1.0 || *q == 0.0)
        .map(|q| (q, quantile_us(h, q)))
        .collect();
    if n > 1.0 {
        points.push((1.0 - 1.0 / n, h.max() as f64 / 1000.0));
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39: a text a spreadsheet would run as a formula is written as text.
    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("pg/off/a"), "pg/off/a");
        assert_eq!(csv_field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("+1"), "'+1");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("=a,\"b\""), "\"'=a,\"\"b\"\"\"");
    }

    #[test]
    fn a_chart_gives_its_data_as_json_and_csv() {
        let mut c = Chart::new("tp", "Throughput </script>", "time (s)", "ops/s");
        c.y_scale = Scale::Log10;
        c.series.push(Series {
            name: "READ".into(),
            points: vec![(0.0, 10.0), (1.0, 20.0), (2.0, 15.0)],
            errors: vec![],
            labels: vec![],
        });
        c.bands.push((-1.0, 0.0, "warm-up".into()));
        c.markers.push((1.5, "node added".into()));
        let json = c.json();
        assert!(!json.contains("</script>"), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["title"], "Throughput </script>");
        assert_eq!(back["y_scale"], "log10");
        assert_eq!(back["kind"], "lines");
        assert_eq!(
            back["series"][0]["points"][1],
            serde_json::json!([1.0, 20.0])
        );
        assert_eq!(back["bands"][0][2], "warm-up");
        assert_eq!(
            c.csv(),
            "series,time (s),ops/s\nREAD,0,10\nREAD,1,20\nREAD,2,15\n"
        );
    }
}
