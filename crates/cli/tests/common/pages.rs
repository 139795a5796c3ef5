//! Reports in a real browser: a probe asks Chart.js what it drew of every chart of a page (sizes,
//! series, tick labels and where they are, legend boxes, the labels beside markers and points),
//! and the checks every page's charts must pass.

use std::path::Path;

use super::{browse, probe_output};

/// What the probe found in the browser.
#[derive(Debug, serde::Deserialize)]
pub struct Probe {
    pub charts: Vec<Drawn>,
    pub banners: Vec<String>,
    /// On the throughput chart, if there is one.
    pub interaction: Option<Interaction>,
}

/// What hovering, dragging and a legend click did.
#[derive(Debug, serde::Deserialize)]
pub struct Interaction {
    /// Points the tooltip shows.
    pub hovered: usize,
    /// The time axis narrowed to the dragged range.
    pub zoomed: bool,
    pub first_series_hidden: bool,
}

/// What the browser drew of one chart.
#[derive(Debug, serde::Deserialize)]
pub struct Drawn {
    pub id: String,
    pub w: f64,
    pub h: f64,
    /// Series with points on the canvas.
    pub drawn: usize,
    pub scales: Vec<DrawnScale>,
    /// Every legend entry lies inside the canvas (none cut off).
    pub legend_fits: bool,
    /// The text drawn beside markers (a knee) and points (a scatter's cells).
    #[serde(default)]
    pub labels: Vec<DrawnLabel>,
}

#[derive(Debug, serde::Deserialize)]
pub struct DrawnLabel {
    pub kind: String,
    pub text: String,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

impl DrawnLabel {
    pub fn overlaps(&self, o: &DrawnLabel) -> bool {
        self.left < o.right && o.left < self.right && self.top < o.bottom && o.top < self.bottom
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct DrawnScale {
    pub axis: String,
    pub kind: String,
    /// Tick labels with text.
    pub labels: usize,
    /// Pairs of neighbouring tick labels that overlap on screen.
    pub overlaps: usize,
    /// The data on this axis are whole numbers (threads, nodes): then so must the ticks be.
    pub whole_data: bool,
    pub fractional_ticks: usize,
}

/// Measures every chart in the browser: a copy of the report with a probe script after the page's
/// own asks Chart.js what it drew (sizes, series, tick labels and where they are, legend boxes)
/// and writes it into the DOM, with the page's banners.
pub fn probe(dir: &Path, html: &Path) -> Probe {
    let text = std::fs::read_to_string(html).unwrap();
    let probe = r#"<script>
(function () {
  var ctx = document.createElement('canvas').getContext('2d');
  var whole = function (v) { return Math.abs(v - Math.round(v)) < 1e-9; };
  var out = Array.from(document.querySelectorAll('figure.chart')).map(function (f) {
    var canvas = f.querySelector('canvas');
    var chart = Chart.getChart(canvas);
    var r = canvas.getBoundingClientRect();
    var drawn = chart.data.datasets.filter(function (d, i) {
      return chart.getDatasetMeta(i).data.some(function (e) { return isFinite(e.x) && isFinite(e.y); });
    }).length;
    var scales = ['x', 'y'].map(function (k) {
      var s = chart.scales[k];
      var items = s.getLabelItems().filter(function (it) { return String(it.label) !== ''; });
      var overlaps = 0;
      for (var i = 1; i < items.length; i++) {
        var a = items[i - 1], b = items[i];
        ctx.font = a.font.string;
        var wa = ctx.measureText(String(a.label)).width, wb = ctx.measureText(String(b.label)).width;
        var rot = Math.abs(a.options.rotation || 0);
        var gap;
        if (k === 'x') {
          var dx = Math.abs(b.options.translation[0] - a.options.translation[0]);
          gap = rot < 1e-6 ? dx - (wa + wb) / 2 : dx * Math.sin(rot) - a.font.size;
        } else {
          gap = Math.abs(b.options.translation[1] - a.options.translation[1]) - a.font.size;
        }
        if (gap < -0.5) overlaps++;
      }
      var values = [];
      chart.data.datasets.forEach(function (d) {
        d.data.forEach(function (p) { if (p && typeof p === 'object') values.push(k === 'x' ? p.x : p.y); });
      });
      return {
        axis: k, kind: s.type, labels: items.length, overlaps: overlaps,
        whole_data: s.type === 'linear' && values.length > 0 && values.every(whole),
        fractional_ticks: s.ticks.filter(function (t) { return !whole(t.value); }).length
      };
    });
    var fits = (chart.legend.legendHitBoxes || []).every(function (b) {
      return b.left >= 0 && b.left + b.width <= chart.width + 0.5;
    });
    return { id: f.id, w: r.width, h: r.height, drawn: drawn, scales: scales, legend_fits: fits, labels: chart.$labels || [] };
  });
  var banners = Array.from(document.querySelectorAll('.banner')).map(function (b) { return b.textContent; });
  var write = function (interaction) {
    var pre = document.createElement('pre');
    pre.id = 'probe';
    pre.textContent = JSON.stringify({ charts: out, banners: banners, interaction: interaction });
    document.body.appendChild(pre);
  };
  // As a user would: hover the throughput chart, click its first legend entry, drag across the middle
  // half of its time axis. Chart.js handles hover and clicks on the next animation frame, and headless
  // Chromium runs animation frames only while the page loads: both are dispatched at once, before it
  // has loaded, and looked at later (with a fallback below); the drag zoom listens to the mouse
  // directly.
  var fig = document.querySelector('figure.chart[id$="-throughput"]');
  if (!fig) { write(null); return; }
  var canvas = fig.querySelector('canvas'), chart = Chart.getChart(canvas);
  var area = chart.chartArea, y = (area.top + area.bottom) / 2;
  var mouse = function (type, x, y) {
    var r = canvas.getBoundingClientRect();
    canvas.dispatchEvent(new MouseEvent(type, { clientX: r.left + x, clientY: r.top + y, bubbles: true, button: 0 }));
  };
  var result = {};
  var box = chart.legend.legendHitBoxes[0];
  var hoverAt = [(area.left + area.right) / 2, y], clickAt = [box.left + box.width / 2, box.top + box.height / 2];
  mouse('mousemove', hoverAt[0], hoverAt[1]);
  mouse('click', clickAt[0], clickAt[1]);
  setTimeout(function () {
    // On a loaded machine the page may finish loading before that frame comes, and then it never
    // does: hand the same events to Chart.js's own handler, as its frame would have.
    if (chart.tooltip.getActiveElements().length === 0 && chart.isDatasetVisible(0)) {
      var r = canvas.getBoundingClientRect();
      [['mousemove', hoverAt], ['click', clickAt]].forEach(function (e) {
        var native = new MouseEvent(e[0], { clientX: r.left + e[1][0], clientY: r.top + e[1][1], bubbles: true });
        chart._eventHandler({ type: e[0], chart: chart, native: native, x: e[1][0], y: e[1][1] });
      });
    }
    result.hovered = chart.tooltip.getActiveElements().length;
    result.first_series_hidden = !chart.isDatasetVisible(0);
    var before = [chart.scales.x.min, chart.scales.x.max];
    var x0 = area.left + (area.right - area.left) * 0.25, x1 = area.left + (area.right - area.left) * 0.75;
    mouse('mousedown', x0, y);
    mouse('mousemove', x1, y);
    mouse('mouseup', x1, y);
    setTimeout(function () {
      result.zoomed = chart.scales.x.min > before[0] && chart.scales.x.max < before[1];
      write(result);
    }, 300);
  }, 300);
})();
</script></body>"#;
    let probed = dir.join("probed.html");
    std::fs::write(&probed, text.replace("</body>", probe)).unwrap();
    let (dom, _) = browse(
        dir,
        &["--dump-dom", "--virtual-time-budget=5000"],
        &format!("file://{}", probed.display()),
    );
    let json = probe_output(&dom);
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// Every chart has a size and drawn series; every axis has tick labels (log axes too) that do not
/// overlap; an axis of whole numbers has no ticks between them; no legend entry is cut off. Returns
/// what the probe found.
pub fn assert_all_charts_render(dir: &Path, html: &Path, at_least: usize) -> Probe {
    let probe = probe(dir, html);
    let charts = &probe.charts;
    assert!(
        charts.len() >= at_least,
        "{} charts: {charts:?}",
        charts.len()
    );
    for c in charts {
        assert!(c.w > 500.0 && c.h > 200.0, "{} is {} x {}", c.id, c.w, c.h);
        assert!(c.drawn > 0, "{} has no drawn series", c.id);
        assert!(c.legend_fits, "{}: a legend entry is cut off", c.id);
        for s in &c.scales {
            assert!(
                s.labels >= 2,
                "{} {} axis ({}): {} tick labels",
                c.id,
                s.axis,
                s.kind,
                s.labels
            );
            assert_eq!(
                s.overlaps, 0,
                "{} {} axis: overlapping tick labels",
                c.id, s.axis
            );
            if s.whole_data {
                assert_eq!(
                    s.fractional_ticks, 0,
                    "{} {} axis: ticks between whole numbers",
                    c.id, s.axis
                );
            }
        }
    }
    probe
}
