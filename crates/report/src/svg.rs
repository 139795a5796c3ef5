//! Charts as inline SVG: lines, points and bars with axes, ticks, legend, shaded ranges and event
//! markers. No script and no fonts to fetch, so a report opens anywhere, offline. Every chart also
//! gives its data as CSV.

use std::fmt::Write;

const W: f64 = 760.0;
const H: f64 = 320.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 48.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    Log10,
    /// Percentiles (0..1) spread as -log10(1 - q): 90%, 99%, 99.9% ... equally apart.
    Percentile,
}

impl Scale {
    fn map(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log10 => v.max(1e-12).log10(),
            Scale::Percentile => -(1.0 - v.min(0.999_999_9)).log10(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Lines,
    Points,
    /// One bar per category (x = category index) per series, with optional error bars.
    Bars,
}

#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Bars: half-widths of the error bars (e.g. a 95% confidence interval), one per point.
    pub errors: Vec<f64>,
}

#[derive(Debug, Clone)]
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
        let _ = writeln!(
            out,
            "series,{},{}{}",
            csv_field(&self.x_label),
            csv_field(&self.y_label),
            if bars { ",error" } else { "" }
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
                out.push('\n');
            }
        }
        out
    }

    pub fn svg(&self) -> String {
        let pts = self.series.iter().flat_map(|s| s.points.iter().copied());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        for s in &self.series {
            for ((_, y), e) in s.points.iter().zip(&s.errors) {
                y1 = y1.max(y + e);
            }
        }
        for (a, b, _) in &self.bands {
            x0 = x0.min(*a);
            x1 = x1.max(*b);
        }
        for (m, _) in &self.markers {
            x0 = x0.min(*m);
            x1 = x1.max(*m);
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if self.diagonal {
            (x0, x1) = (x0.min(y0), x1.max(y1));
            (y0, y1) = (x0, x1);
        }
        if self.kind == Kind::Bars {
            x0 = -0.5;
            x1 = self.categories.len().max(1) as f64 - 0.5;
        }
        if self.y_scale == Scale::Linear {
            y0 = y0.min(0.0);
        }
        let (mx0, mx1) = span(self.x_scale.map(x0), self.x_scale.map(x1));
        let (my0, my1) = span(self.y_scale.map(y0), self.y_scale.map(y1));
        let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
        let px = |x: f64| LEFT + (self.x_scale.map(x) - mx0) / (mx1 - mx0) * pw;
        let py = |y: f64| TOP + ph - (self.y_scale.map(y) - my0) / (my1 - my0) * ph;
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg class="chart" id="{}" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{}">"#,
            esc(&self.id),
            esc(&self.title)
        );
        let _ = write!(
            s,
            r##"<rect x="0" y="0" width="{W}" height="{H}" fill="#fff"/><text x="{LEFT}" y="20" class="t">{}</text>"##,
            esc(&self.title)
        );
        for (a, b, label) in &self.bands {
            let (xa, xb) = (px(*a).max(LEFT), px(*b).min(LEFT + pw));
            let _ = write!(
                s,
                r##"<rect x="{xa:.1}" y="{TOP}" width="{:.1}" height="{ph}" fill="#e8e8e8"/><text x="{:.1}" y="{:.1}" class="s">{}</text>"##,
                (xb - xa).max(0.0),
                xa + 3.0,
                TOP + 12.0,
                esc(label)
            );
        }
        // Axes and ticks.
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="#333"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
            TOP + ph,
            TOP + ph,
            LEFT + pw,
            TOP + ph
        );
        for (v, label) in ticks(self.y_scale, my0, my1) {
            let y = TOP + ph - (self.y_scale.map(v) - my0) / (my1 - my0) * ph;
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" class="s" text-anchor="end">{label}</text>"##,
                LEFT + pw,
                LEFT - 4.0,
                y + 4.0
            );
        }
        if self.kind == Kind::Bars {
            for (i, c) in self.categories.iter().enumerate() {
                let x = px(i as f64);
                let _ = write!(
                    s,
                    r#"<text x="{x:.1}" y="{:.1}" class="s" text-anchor="end" transform="rotate(-30 {x:.1} {:.1})">{}</text>"#,
                    TOP + ph + 14.0,
                    TOP + ph + 14.0,
                    esc(&shorten(c, 28))
                );
            }
        } else {
            for (v, label) in ticks(self.x_scale, mx0, mx1) {
                let x = LEFT + (self.x_scale.map(v) - mx0) / (mx1 - mx0) * pw;
                let _ = write!(
                    s,
                    r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" class="s" text-anchor="middle">{label}</text>"##,
                    TOP + ph,
                    TOP + ph + 4.0,
                    TOP + ph + 16.0
                );
            }
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="s" text-anchor="middle">{}</text><text x="14" y="{:.1}" class="s" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
            LEFT + pw / 2.0,
            H - 6.0,
            esc(&self.x_label),
            TOP + ph / 2.0,
            TOP + ph / 2.0,
            esc(&self.y_label)
        );
        if self.diagonal {
            let _ = write!(
                s,
                r##"<line class="diagonal" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#888" stroke-dasharray="5,4"/>"##,
                px(x0),
                py(x0),
                px(x1),
                py(x1)
            );
        }
        // Data.
        let n = self.series.len().max(1) as f64;
        for (k, ser) in self.series.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            match self.kind {
                Kind::Lines => {
                    let path: Vec<String> = ser
                        .points
                        .iter()
                        .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
                        .collect();
                    let _ = write!(
                        s,
                        r#"<polyline class="series" fill="none" stroke="{color}" stroke-width="1.6" points="{}"/>"#,
                        path.join(" ")
                    );
                    // A line needs two points: a lone point shows as a dot.
                    if let [(x, y)] = ser.points.as_slice() {
                        let _ = write!(
                            s,
                            r#"<circle class="series" cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                            px(*x),
                            py(*y)
                        );
                    }
                }
                Kind::Points => {
                    for (x, y) in &ser.points {
                        let _ = write!(
                            s,
                            r#"<circle class="series" cx="{:.1}" cy="{:.1}" r="4" fill="{color}"/>"#,
                            px(*x),
                            py(*y)
                        );
                    }
                }
                Kind::Bars => {
                    let slot = pw / self.categories.len().max(1) as f64 * 0.8;
                    let bw = slot / n;
                    for (i, (x, y)) in ser.points.iter().enumerate() {
                        let left = px(*x) - slot / 2.0 + k as f64 * bw;
                        let (top, base) = (py(*y), py(y0.max(0.0)));
                        let _ = write!(
                            s,
                            r#"<rect class="series" x="{left:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"/>"#,
                            top.min(base),
                            (bw - 2.0).max(1.0),
                            (base - top).abs().max(0.5)
                        );
                        if let Some(e) = ser.errors.get(i).filter(|e| **e > 0.0) {
                            let cx = left + bw / 2.0 - 1.0;
                            let _ = write!(
                                s,
                                r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="#000"/>"##,
                                py(y + e),
                                py((y - e).max(y0))
                            );
                        }
                    }
                }
            }
            let ly = TOP + 6.0 + k as f64 * 16.0;
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{:.1}" class="s">{}</text>"#,
                LEFT + pw + 10.0,
                ly,
                LEFT + pw + 24.0,
                ly + 9.0,
                esc(&shorten(&ser.name, 22))
            );
        }
        for (m, label) in &self.markers {
            let x = px(*m);
            let _ = write!(
                s,
                r##"<line class="marker" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#444" stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" class="s" transform="rotate(-90 {:.1} {:.1})">{}</text>"##,
                TOP + ph,
                x - 3.0,
                TOP + ph - 4.0,
                x - 3.0,
                TOP + ph - 4.0,
                esc(label)
            );
        }
        s.push_str("</svg>");
        s
    }
}

/// A range that is never empty.
fn span(a: f64, b: f64) -> (f64, f64) {
    if (b - a).abs() < 1e-12 {
        (a - 0.5, b + 0.5)
    } else {
        (a, b)
    }
}

/// Tick values and labels over the mapped range [m0, m1].
fn ticks(scale: Scale, m0: f64, m1: f64) -> Vec<(f64, String)> {
    match scale {
        Scale::Linear => {
            let step = nice_step((m1 - m0) / 5.0);
            let mut v = (m0 / step).ceil() * step;
            let mut out = Vec::new();
            while v <= m1 + step * 1e-9 && out.len() < 20 {
                out.push((v, number(v)));
                v += step;
            }
            out
        }
        Scale::Log10 => (m0.floor() as i32..=m1.ceil() as i32)
            .map(|e| 10f64.powi(e))
            .filter(|v| (m0..=m1 + 1e-9).contains(&v.log10()))
            .map(|v| (v, number(v)))
            .collect(),
        Scale::Percentile => (0..=6)
            .map(|k| 1.0 - 10f64.powi(-k))
            .filter(|q| (m0 - 1e-9..=m1 + 1e-9).contains(&Scale::Percentile.map(*q)))
            .map(|q| (q, format!("{}%", number(q * 100.0))))
            .collect(),
    }
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    p * if f < 1.5 {
        1.0
    } else if f < 3.0 {
        2.0
    } else if f < 7.0 {
        5.0
    } else {
        10.0
    }
}

fn number(v: f64) -> String {
    let a = v.abs();
    if a < 1e-9 {
        return "0".into();
    }
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').to_string()
    }
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_draws_its_series_and_gives_its_data() {
        let mut c = Chart::new("tp", "Throughput", "time (s)", "ops/s");
        c.series.push(Series {
            name: "READ".into(),
            points: vec![(0.0, 10.0), (1.0, 20.0), (2.0, 15.0)],
            errors: vec![],
        });
        c.bands.push((-1.0, 0.0, "warm-up".into()));
        c.markers.push((1.5, "node added".into()));
        let svg = c.svg();
        assert!(svg.starts_with("<svg class=\"chart\" id=\"tp\""));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("warm-up") && svg.contains("node added"));
        assert_eq!(
            c.csv(),
            "series,time (s),ops/s\nREAD,0,10\nREAD,1,20\nREAD,2,15\n"
        );
    }

    #[test]
    fn ticks_are_round_numbers_and_percentiles_spread_by_nines() {
        let t: Vec<String> = ticks(Scale::Linear, 0.0, 97.0)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(t, ["0", "20", "40", "60", "80"]);
        let p: Vec<String> = ticks(Scale::Percentile, 0.0, 3.0)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(p, ["0%", "90%", "99%", "99.9%"]);
        let l: Vec<f64> = ticks(Scale::Log10, 0.5, 3.2)
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(l, [10.0, 100.0, 1000.0]);
    }
}
