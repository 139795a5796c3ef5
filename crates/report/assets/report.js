// scalebench report charts: each <figure class="chart"> holds its chart as JSON (the Rust `Chart`
// type) and a canvas; this draws it with Chart.js. Hover shows values, dragging across a time range
// zooms into it (double-click resets), clicking a legend entry hides that series.
(function () {
  'use strict';
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
    '#7f7f7f', '#bcbd22', '#17becf'];

  // 1234567 -> "1.23M"; small numbers with up to 4 significant digits.
  function number(v) {
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + 'k';
    return String(+v.toPrecision(4));
  }
  // Percentiles are spread as -log10(1 - q): 90%, 99%, 99.9% ... equally apart.
  function toPercentileAxis(q) { return -Math.log10(1 - Math.min(q, 0.9999999)); }
  function fromPercentileAxis(t) { return 1 - Math.pow(10, -t); }
  function percent(q) { return String(+(q * 100).toPrecision(7)) + '%'; }

  function allWhole(values) {
    return values.length > 0 && values.every(function (v) { return Math.abs(v - Math.round(v)) < 1e-9; });
  }

  function axis(spec, which) {
    var kind = spec[which + '_scale'];
    var values = [];
    spec.series.forEach(function (s) {
      s.points.forEach(function (p) { values.push(which === 'x' ? p[0] : p[1]); });
    });
    var o = {
      // The label names the data (the CSV's header); the page says how it is drawn.
      title: {
        display: true,
        text: spec[which + '_label'] + (kind === 'log10'
          ? (which === 'x' && spec.log_zero_at ? ' (log; 0 drawn at ' + spec.log_zero_at + ')' : ' (log)')
          : '')
      },
      ticks: { maxRotation: 60, autoSkip: true },
      grid: { color: '#eee' }
    };
    if (which === 'x' && spec.kind === 'bars') {
      o.type = 'category';
      return o;
    }
    if (kind === 'log10') {
      o.type = 'logarithmic';
      // Only 1, 2 and 5 of each decade are labelled: skipping ticks would drop those too.
      o.ticks.autoSkip = false;
      o.ticks.callback = function (v) {
        var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
        return [1, 2, 5].some(function (k) { return Math.abs(m - k) < 1e-6; }) ? number(v) : '';
      };
    } else if (kind === 'percentile') {
      o.type = 'linear';
      o.min = 0;
      o.ticks.stepSize = 1;
      o.ticks.callback = function (v) { return Number.isInteger(v) ? percent(fromPercentileAxis(v)) : ''; };
    } else {
      o.type = 'linear';
      o.ticks.callback = number;
      // Shaded ranges (the warm-up before the measurement start) are part of the time axis.
      if (which === 'x' && spec.bands.length) {
        o.suggestedMin = Math.min.apply(null, spec.bands.map(function (b) { return b[0]; }));
      }
      // Threads, nodes, clients, whole seconds: no ticks between whole numbers.
      if (allWhole(values)) o.ticks.precision = 0;
      if (which === 'y') o.beginAtZero = true;
    }
    return o;
  }

  // Bars: room for the error bars. The diagonal: both axes over the same range, so y = x is the
  // diagonal of the plot (a point above it read faster than it wrote).
  function fitRanges(spec, scales) {
    if (spec.kind === 'bars') {
      var top = 0;
      spec.series.forEach(function (s) {
        s.points.forEach(function (p, i) { top = Math.max(top, p[1] + (s.errors[i] || 0)); });
      });
      if (top > 0) scales.y.suggestedMax = top;
    }
    if (spec.diagonal) {
      var all = [];
      spec.series.forEach(function (s) { s.points.forEach(function (p) { all.push(p[0], p[1]); }); });
      all = all.filter(function (v) { return v > 0 || spec.x_scale !== 'log10'; });
      if (all.length) {
        var lo = Math.min.apply(null, all), hi = Math.max.apply(null, all);
        if (spec.x_scale === 'log10') { lo /= 1.5; hi *= 1.5; }
        scales.x.min = scales.y.min = lo;
        scales.x.max = scales.y.max = hi;
        delete scales.y.beginAtZero;
      }
    }
    return scales;
  }

  function datasets(spec) {
    return spec.series.map(function (s, i) {
      var color = COLORS[i % COLORS.length];
      var d = {
        label: s.name, borderColor: color, backgroundColor: color, errors: s.errors,
        pointLabels: s.labels, columns: s.columns || []
      };
      if (spec.kind === 'bars') {
        var values = spec.categories.map(function () { return null; });
        s.points.forEach(function (p) { values[Math.round(p[0])] = p[1]; });
        d.data = values;
        d.backgroundColor = color + 'cc';
        return d;
      }
      // `at` keeps the measured x (a delay of 0 drawn elsewhere on a log axis) for the tooltip.
      d.data = s.points.map(function (p) {
        var x = spec.x_scale === 'percentile' ? toPercentileAxis(p[0]) : p[0];
        if (spec.x_scale === 'log10' && x <= 0 && spec.log_zero_at) x = spec.log_zero_at;
        return { x: x, y: p[1], at: p[0] };
      });
      d.showLine = spec.kind === 'lines';
      d.borderWidth = 1.5;
      if (s.dashed) { d.borderDash = [6, 4]; d.borderWidth = 2; }
      d.pointRadius = spec.kind === 'points' || s.points.length <= 60 ? 2.5 : 0;
      d.pointHoverRadius = 4;
      return d;
    });
  }

  // Warm-up and transition bands, event markers, the y = x diagonal, error bars.
  function decorations(spec) {
    return {
      id: 'scalebenchDecorations',
      beforeDatasetsDraw: function (chart) {
        var x = chart.scales.x, area = chart.chartArea;
        // The text drawn beside markers and points, as boxes: what a test (or a reader's script)
        // asks to see whether labels overlap.
        chart.$labels = [];
        if (spec.kind === 'bars') return;
        var ctx = chart.ctx;
        ctx.save();
        ctx.font = '11px sans-serif';
        spec.bands.forEach(function (b) {
          var x0 = Math.max(area.left, x.getPixelForValue(b[0]));
          var x1 = Math.min(area.right, x.getPixelForValue(b[1]));
          if (x1 <= x0) return;
          ctx.fillStyle = 'rgba(120,120,120,0.12)';
          ctx.fillRect(x0, area.top, x1 - x0, area.bottom - area.top);
          // Its label where it fits inside it (a squeezed one is unreadable; a marker can say it).
          if (ctx.measureText(b[2]).width <= x1 - x0 - 6) {
            ctx.fillStyle = '#555';
            ctx.fillText(b[2], x0 + 3, area.top + 12);
          }
        });
        // Each marker's label beside its line (left of it where it would leave the plot), on the
        // first row where it overlaps no other label.
        var rows = [];
        spec.markers.map(function (m) { return { px: x.getPixelForValue(m[0]), text: m[1] }; })
          .filter(function (m) { return m.px >= area.left && m.px <= area.right; })
          .sort(function (a, b) { return a.px - b.px; })
          .forEach(function (m) {
            ctx.strokeStyle = '#444';
            ctx.setLineDash([4, 3]);
            ctx.beginPath();
            ctx.moveTo(m.px, area.top);
            ctx.lineTo(m.px, area.bottom);
            ctx.stroke();
            var w = ctx.measureText(m.text).width;
            var x0 = m.px + 3 + w > area.right ? Math.max(area.left, m.px - 3 - w) : m.px + 3;
            var row = 0;
            while (rows[row] !== undefined && rows[row].some(function (r) { return x0 < r[1] + 4 && x0 + w > r[0] - 4; })) row++;
            (rows[row] = rows[row] || []).push([x0, x0 + w]);
            ctx.fillStyle = '#222';
            var baseline = area.top + 24 + 13 * row;
            ctx.fillText(m.text, x0, baseline);
            chart.$labels.push({ kind: 'marker', text: m.text, left: x0, right: x0 + w, top: baseline - 10, bottom: baseline });
          });
        if (spec.diagonal) {
          var y = chart.scales.y;
          var lo = Math.max(x.min, y.min), hi = Math.min(x.max, y.max);
          ctx.strokeStyle = '#999';
          ctx.setLineDash([6, 4]);
          ctx.beginPath();
          ctx.moveTo(x.getPixelForValue(lo), y.getPixelForValue(lo));
          ctx.lineTo(x.getPixelForValue(hi), y.getPixelForValue(hi));
          ctx.stroke();
        }
        ctx.restore();
      },
      afterDatasetsDraw: function (chart) {
        if (spec.kind !== 'bars') return pointLabels(chart);
        var ctx = chart.ctx, y = chart.scales.y;
        ctx.save();
        ctx.strokeStyle = '#222';
        chart.data.datasets.forEach(function (d, i) {
          var meta = chart.getDatasetMeta(i);
          if (meta.hidden || !d.errors) return;
          meta.data.forEach(function (bar, k) {
            var v = d.data[k], e = d.errors[k];
            if (v == null || !e) return;
            var top = y.getPixelForValue(v + e), bottom = y.getPixelForValue(Math.max(v - e, y.min));
            ctx.beginPath();
            ctx.moveTo(bar.x, top); ctx.lineTo(bar.x, bottom);
            ctx.moveTo(bar.x - 5, top); ctx.lineTo(bar.x + 5, top);
            ctx.moveTo(bar.x - 5, bottom); ctx.lineTo(bar.x + 5, bottom);
            ctx.stroke();
          });
        });
        ctx.restore();
      }
    };
  }

  // A scatter's points say what they are (a cell, a swept value) beside them, while they are few
  // enough to read.
  function pointLabels(chart) {
    var ctx = chart.ctx, area = chart.chartArea;
    ctx.save();
    ctx.font = '10px sans-serif';
    ctx.fillStyle = '#333';
    chart.data.datasets.forEach(function (d, i) {
      var meta = chart.getDatasetMeta(i);
      if (meta.hidden || !d.pointLabels || !d.pointLabels.length || d.data.length > 30) return;
      meta.data.forEach(function (pt, k) {
        var text = d.pointLabels[k];
        if (!text || !isFinite(pt.x) || !isFinite(pt.y)) return;
        var w = ctx.measureText(text).width;
        var x0 = pt.x + 5 + w > area.right ? pt.x - 5 - w : pt.x + 5;
        ctx.fillText(text, x0, pt.y - 4);
        chart.$labels.push({ kind: 'point', text: text, left: x0, right: x0 + w, top: pt.y - 13, bottom: pt.y - 4 });
      });
    });
    ctx.restore();
  }

  // A point's own figures (reads, an interval's bounds) after its value when hovered.
  function columnsOf(dataset, k) {
    var parts = (dataset.columns || []).map(function (c) { return c[0] + ' ' + number(c[1][k]); });
    return parts.length ? ' (' + parts.join(', ') + ')' : '';
  }

  function draw(figure) {
    var spec = JSON.parse(figure.querySelector('script[type="application/json"]').textContent);
    var canvas = figure.querySelector('canvas');
    var bars = spec.kind === 'bars';
    var chart = new Chart(canvas, {
      type: bars ? 'bar' : 'line',
      data: { labels: bars ? spec.categories : undefined, datasets: datasets(spec) },
      plugins: [decorations(spec)],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: bars ? undefined : false,
        interaction: bars ? { mode: 'index', intersect: false } : { mode: 'nearest', axis: 'x', intersect: false },
        scales: fitRanges(spec, { x: axis(spec, 'x'), y: axis(spec, 'y') }),
        plugins: {
          title: { display: true, text: spec.title, font: { size: 14 } },
          legend: { display: spec.series.length > 1 || bars, position: 'top' },
          tooltip: {
            callbacks: {
              title: function (items) {
                if (!items.length) return '';
                if (bars) return items[0].label;
                var x = items[0].raw.at;
                return spec.x_label + ': ' + (spec.x_scale === 'percentile' ? percent(x) : number(x));
              },
              label: function (item) {
                var e = item.dataset.errors && item.dataset.errors[item.dataIndex];
                var what = item.dataset.pointLabels && item.dataset.pointLabels[item.dataIndex];
                return item.dataset.label + (what ? ' (' + what + ')' : '') + ': ' + number(item.parsed.y) +
                  (bars && e ? ' ± ' + number(e) : '') + (bars ? '' : columnsOf(item.dataset, item.dataIndex));
              }
            }
          },
          zoom: bars ? {} : { zoom: { drag: { enabled: true }, mode: 'x' } }
        }
      }
    });
    if (!bars) canvas.addEventListener('dblclick', function () { chart.resetZoom(); });
  }

  document.querySelectorAll('figure.chart').forEach(draw);
})();
