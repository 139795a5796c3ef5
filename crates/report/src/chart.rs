//! Charts as data: series of points with axes, legend, shaded ranges and event markers. The page
//! draws them with Chart.js (kept in `assets/`, inlined into every report, so a report opens
//! anywhere, offline); every chart also gives its data as CSV.

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
    /// The data as measured (a delay of 0 is 0, a percentile a fraction): how an axis draws them
    /// is the page's, the CSV writes them as they are (percentiles in percent).
    pub points: Vec<(f64, f64)>,
    /// Bars: half-widths of the error bars (the chart's `error_label` says what), one per point.
    pub errors: Vec<f64>,
    /// What each point is (a scatter's cell or swept value), drawn beside it, shown when it is
    /// hovered and kept in the CSV's `label` column; empty: the series' name says it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// More figures of each point (samples, an interval's bounds), one CSV column each and shown
    /// when the point is hovered: (column name, one value per point).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<(String, Vec<f64>)>,
    /// Drawn dashed: a line another may hide (the offered rate under the achieved one), or the
    /// secondary of a pair (service time beside the time from the intended start).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dashed: bool,
}

impl Series {
    /// A series of points and nothing more.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            ..Default::default()
        }
    }

    pub fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }
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
    /// Bars with errors: what the error bars are, the name of their CSV column.
    pub error_label: String,
    /// A logarithmic x axis has no 0: where a point at x = 0 is drawn (the CSV keeps the 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_zero_at: Option<f64>,
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
            error_label: String::new(),
            log_zero_at: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    /// The chart's data, one row per point: `series`, x (bars: the category; percentiles in
    /// percent), y, the error bars' column (named by `error_label`), each of the series' own
    /// columns, and `label` when points are labelled. The values as measured, not as drawn.
    pub fn csv(&self) -> String {
        let bars = self.kind == Kind::Bars;
        let errors = bars && self.series.iter().any(|s| !s.errors.is_empty());
        let labelled = self.series.iter().any(|s| !s.labels.is_empty());
        let percent = self.x_scale == Scale::Percentile;
        let mut columns: Vec<&str> = Vec::new();
        for s in &self.series {
            for (name, _) in &s.columns {
                if !columns.contains(&name.as_str()) {
                    columns.push(name);
                }
            }
        }
        let mut header = vec![
            "series".to_string(),
            if percent {
                format!("{} (%)", self.x_label)
            } else {
                self.x_label.clone()
            },
            self.y_label.clone(),
        ];
        if errors {
            header.push(if self.error_label.is_empty() {
                format!("{} error", self.y_label)
            } else {
                self.error_label.clone()
            });
        }
        header.extend(columns.iter().map(|c| c.to_string()));
        if labelled {
            header.push("label".into());
        }
        let mut rows = vec![header.iter().map(|h| text_field(h)).collect::<Vec<_>>()];
        for s in &self.series {
            for (i, (x, y)) in s.points.iter().enumerate() {
                let mut row = vec![text_field(&s.name)];
                row.push(if bars {
                    text_field(self.categories.get(*x as usize).map_or("", String::as_str))
                } else if percent {
                    // 0.999 as 99.9, not 99.9000000001: the fraction's digits, in percent.
                    format!("{}", (x * 100.0 * 1e9).round() / 1e9)
                } else {
                    x.to_string()
                });
                row.push(y.to_string());
                if errors {
                    row.push(s.errors.get(i).map_or(String::new(), f64::to_string));
                }
                for c in &columns {
                    row.push(
                        s.columns
                            .iter()
                            .find(|(name, _)| name == c)
                            .and_then(|(_, v)| v.get(i))
                            .map_or(String::new(), f64::to_string),
                    );
                }
                if labelled {
                    row.push(text_field(s.labels.get(i).map_or("", String::as_str)));
                }
                rows.push(row);
            }
        }
        csv_text(&rows)
    }

    /// The chart as the page's script reads it: JSON safe inside a `<script>` element.
    pub fn json(&self) -> String {
        serde_json::to_string(self)
            .expect("a chart serializes")
            .replace('<', "\\u003c")
    }
}

/// A text field of a CSV file, never a formula: prefixed with `'` when a spreadsheet would run it
/// (`=`, `+`, `-`, `@`, a tab or a carriage return first: a cell name or an error text is data).
/// Numbers are written as they are (a negative one is a number, not a formula).
pub fn text_field(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

/// Rows as CSV text (RFC 4180, by the `csv` crate: a field with a separator, a quote or a line
/// break of either kind is quoted). Text fields go through [`text_field`] first.
pub fn csv_text(rows: &[Vec<String>]) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in rows {
        w.write_record(r).expect("writing CSV into memory");
    }
    String::from_utf8(w.into_inner().expect("writing CSV into memory"))
        .expect("CSV of UTF-8 fields is UTF-8")
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
    fn field(s: &str) -> String {
        csv_text(&[vec![text_field(s)]])
            .trim_end_matches('\n')
            .to_string()
    }

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(field("pg/off/a"), "pg/off/a");
        assert_eq!(field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(field("+1"), "'+1");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("=a,\"b\""), "\"'=a,\"\"b\"\"\"");
        // A carriage return inside a field is quoted too (issue 44: neither hand-written one did).
        assert_eq!(field("a\rb"), "\"a\rb\"");
        assert_eq!(field("a\nb"), "\"a\nb\"");
    }

    /// Issue 44: the CSV holds the data, not how it is drawn: a delay of 0 stays 0 on a log axis,
    /// percentiles are in percent, samples and interval bounds are columns, the error bars' column
    /// says what they are.
    #[test]
    fn a_charts_csv_holds_data_not_styling() {
        let mut c = Chart::new(
            "v",
            "t-visibility",
            "ms after the acknowledgement",
            "% consistent",
        );
        c.x_scale = Scale::Log10;
        c.log_zero_at = Some(0.01);
        c.series.push(Series {
            columns: vec![("reads".into(), vec![400.0, 10.0])],
            ..Series::new("-pg", vec![(0.0, 80.0), (10.0, 100.0)])
        });
        assert_eq!(
            c.csv(),
            "series,ms after the acknowledgement,% consistent,reads\n'-pg,0,80,400\n'-pg,10,100,10\n"
        );
        let mut p = Chart::new("p", "Latency", "percentile", "microseconds");
        p.x_scale = Scale::Percentile;
        p.series
            .push(Series::new("READ", vec![(0.0, 5.0), (0.999, 90.0)]));
        assert_eq!(
            p.csv(),
            "series,percentile (%),microseconds\nREAD,0,5\nREAD,99.9,90\n"
        );
        let b = crate::html::bars("b", "Throughput", "ops/s", &[("a,b".into(), 10.0, 1.5)]);
        assert_eq!(
            b.csv(),
            "series,cell,ops/s,ops/s 95% CI half-width\nops/s,\"a,b\",10,1.5\n"
        );
    }

    #[test]
    fn a_chart_gives_its_data_as_json_and_csv() {
        let mut c = Chart::new("tp", "Throughput </script>", "time (s)", "ops/s");
        c.y_scale = Scale::Log10;
        c.series.push(Series::new(
            "READ",
            vec![(0.0, 10.0), (1.0, 20.0), (2.0, 15.0)],
        ));
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
