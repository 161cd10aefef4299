// puffer dashboard: draws what data.js hands to pufferData() (puffer/view/experiments.py makes
// it). data.js is loaded as a <script>, not fetched, so the same page works served from
// 127.0.0.1 and opened from disk (file:// pages may not fetch). When the data says
// `refresh > 0` (served), data.js is loaded again every `refresh` seconds.
"use strict";

var pufferDashboard = (function () {
  var PLOT_CONFIG = { displaylogo: false, responsive: true };
  var MAX_CHOSEN = 20; // runs overlaid by default: the newest ones
  var DEFAULT_METRIC = "environment/episode_return"; // every env logs it
  var SMALL_PLOT = { displaylogo: false, responsive: true, displayModeBar: false };
  var COST_LABELS = { wall: "wall time (s)", cpu: "CPU time (s)", steps: "agent steps" };
  var state = { data: null, chosen: null, known: new Set(), selected: null, signature: "",
    revision: 0 };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), attrs[key]);
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { node.appendChild(child); });
    return node;
  }

  function fmt(value) {
    if (value === null || value === undefined) return "–";
    if (typeof value !== "number") return String(value);
    if (Number.isInteger(value) && Math.abs(value) < 1e7) return value.toLocaleString("en");
    return value.toPrecision(4);
  }

  function start() {
    window.pufferData = receive;
    document.getElementById("metric").addEventListener("change", drawCurves);
    document.getElementById("xaxis").addEventListener("change", drawCurves);
    document.getElementById("env").addEventListener("change", function () {
      drawCurves();
      drawTable();
    });
    document.getElementById("cost").addEventListener("change", drawSweeps);
    load();
  }

  function load() {
    var old = document.getElementById("data-script");
    if (old) old.remove();
    // The query defeats the browser cache; a file:// URL ignores it.
    document.head.appendChild(el("script", { id: "data-script", src: "data.js?t=" + Date.now() }));
  }

  function receive(data) {
    var signature = JSON.stringify([
      data.runs.map(function (r) { return [r.id, r.steps, r.updated, r.video]; }),
      data.sweeps.map(function (s) { return [s.id, s.points.length, s.failed]; }),
    ]);
    state.data = data;
    if (state.chosen === null) {
      state.chosen = new Set(data.runs.slice(0, MAX_CHOSEN).map(function (r) { return r.id; }));
      data.runs.forEach(function (r) { state.known.add(r.id); });
    }
    data.runs.forEach(function (r) {
      if (!state.known.has(r.id)) { state.known.add(r.id); state.chosen.add(r.id); }
    });
    document.getElementById("source").textContent = data.data_dir;
    document.getElementById("updated").textContent =
      data.runs.length + " runs, " + data.sweeps.length + " sweeps; read " +
      new Date(data.generated * 1000).toLocaleTimeString();
    if (signature !== state.signature) {
      state.signature = signature;
      fillEnvs();
      fillMetrics();
      drawCurves();
      drawTable();
      drawDetail();
      drawSweeps();
    }
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
    if (data.refresh > 0) setTimeout(load, data.refresh * 1000);
  }

  function fillMetrics() {
    var select = document.getElementById("metric");
    var names = new Set();
    state.data.runs.forEach(function (r) { Object.keys(r.metrics).forEach(names.add, names); });
    var sorted = Array.from(names).sort();
    var current = select.value;
    if (!current) current = names.has(DEFAULT_METRIC) ? DEFAULT_METRIC : sorted[0] || "";
    select.replaceChildren.apply(select, sorted.map(function (name) {
      return el("option", { value: name, text: name });
    }));
    select.value = current;
  }

  function envNames() {
    return Array.from(new Set(state.data.runs.map(function (r) { return r.env; }))).sort();
  }

  // The env filter: "" shows every env; an env that is gone falls back to "".
  function fillEnvs() {
    var select = document.getElementById("env");
    var current = select.value;
    var names = envNames();
    select.replaceChildren.apply(select, [el("option", { value: "", text: "all envs" })].concat(
      names.map(function (name) { return el("option", { value: name, text: name }); })));
    select.value = names.indexOf(current) >= 0 ? current : "";
  }

  function shownEnv(run) {
    var env = document.getElementById("env").value;
    return !env || run.env === env;
  }

  // One chart per env, so a long run of one env does not squash another env's short curves
  // onto a sliver of a shared x axis. A chart's div is kept across redraws; the div of an env
  // no longer drawn is removed.
  function drawCurves() {
    var metric = document.getElementById("metric").value;
    var x = document.getElementById("xaxis").value;
    var holder = document.getElementById("curves");
    var byEnv = {};
    state.data.runs
      .filter(function (r) { return state.chosen.has(r.id) && r.metrics[metric] && shownEnv(r); })
      .forEach(function (r) { (byEnv[r.env] = byEnv[r.env] || []).push(r); });
    var envs = Object.keys(byEnv).sort();
    var charts = {};
    holder.querySelectorAll(".chart").forEach(function (chart) {
      if (envs.indexOf(chart.dataset.env) >= 0) charts[chart.dataset.env] = chart;
      else { Plotly.purge(chart.lastChild); chart.remove(); }
    });
    var empty = holder.querySelector("p");
    if (empty) empty.remove();
    if (!envs.length) holder.appendChild(el("p", { text: "no ticked run logs " + metric }));
    envs.forEach(function (env) {
      var chart = charts[env];
      if (!chart) {
        chart = el("div", { class: "chart", "data-env": env }, [
          el("h3", { text: env }), el("div", { class: "plot curves", "data-env": env })]);
      }
      holder.appendChild(chart); // in env order
      var traces = byEnv[env].map(function (r) {
        // Epochs in which no episode ended log no env stats (null): bridge those gaps.
        return { type: "scatter", mode: "lines+markers", name: r.id, x: r[x],
          y: r.metrics[metric], connectgaps: true, marker: { size: 4 } };
      });
      var layout = {
        // A redraw may hand Plotly.react the very arrays it drew (a filter turned off and on):
        // a new datarevision makes it recompute the ranges; uirevision keeps a zoom.
        datarevision: ++state.revision, uirevision: env,
        margin: { t: 10, r: 10, b: 45, l: 60 },
        xaxis: { title: { text: x === "step" ? "agent steps" : "training wall time (s)" } },
        yaxis: { title: { text: metric } },
        legend: { orientation: "h", y: -0.25, yanchor: "top" },
      };
      Plotly.react(chart.lastChild, traces, layout, PLOT_CONFIG);
    });
  }

  function diffText(diff, limit) {
    var keys = Object.keys(diff);
    var shown = keys.slice(0, limit).map(function (k) { return k + "=" + fmt(diff[k][0]); });
    if (keys.length > limit) shown.push("+" + (keys.length - limit) + " more");
    return shown.join("  ") || "defaults";
  }

  function drawTable() {
    var rows = state.data.runs.filter(shownEnv).map(function (r) {
      var box = el("input", { type: "checkbox" });
      box.checked = state.chosen.has(r.id);
      box.addEventListener("click", function (event) {
        event.stopPropagation();
        if (box.checked) state.chosen.add(r.id); else state.chosen.delete(r.id);
        drawCurves();
      });
      var video = r.video ? el("a", { href: fileUrl(r.video), text: "eval.gif" }) : el("span");
      var about = r.error ? "unreadable: " + r.error : diffText(r.diff, 6);
      if (r.skipped) about += "  (" + r.skipped + " metrics lines that are no rows skipped)";
      if (r.unread) about += "  (the first " + (r.unread / 1e6).toFixed(1) + " MB of its metrics left out: only the newest rows are drawn)";
      var row = el("tr", { id: "run-" + r.id, "data-run": r.id, onclick: function () { select(r.id); } }, [
        el("td", {}, [box]),
        el("td", { text: r.id }),
        el("td", { text: r.env + (r.sweep ? " (sweep)" : "") }),
        el("td", { class: "diff", text: about }),
        el("td", { text: fmt(r.score) }),
        el("td", { text: r.sps === null ? "–" : Math.round(r.sps).toLocaleString("en") }),
        el("td", { text: fmt(r.steps) }),
        el("td", {}, [video]),
      ]);
      if (r.id === state.selected) row.classList.add("selected");
      if (r.error) row.classList.add("broken");
      return row;
    });
    var body = document.querySelector("#runs tbody");
    body.replaceChildren.apply(body, rows);
  }

  function select(id) {
    state.selected = id;
    document.querySelectorAll("#runs tbody tr").forEach(function (row) {
      row.classList.toggle("selected", row.dataset.run === id);
    });
    drawDetail();
    var row = document.getElementById("run-" + id);
    if (row) row.scrollIntoView({ block: "nearest" });
  }

  function drawDetail() {
    var detail = document.getElementById("detail");
    var run = state.data.runs.find(function (r) { return r.id === state.selected; });
    if (!run) { detail.replaceChildren(); return; }
    var rows = Object.keys(run.diff).map(function (k) {
      return el("tr", {}, [
        el("td", { text: k }), el("td", { text: fmt(run.diff[k][0]) }),
        el("td", { text: fmt(run.diff[k][1]) }),
      ]);
    });
    var parts = [
      el("h3", { text: run.id }),
      el("table", { class: "diff" }, [
        el("thead", {}, [el("tr", {}, [el("th", { text: "key" }), el("th", { text: "value" }),
          el("th", { text: "default" })])]),
        el("tbody", {}, rows),
      ]),
    ];
    if (run.error) parts.splice(1, 0, el("p", { class: "error", text: "unreadable: " + run.error }));
    if (run.video) parts.push(el("img", { id: "video", src: fileUrl(run.video), alt: "eval video" }));
    detail.replaceChildren.apply(detail, parts);
  }

  // A run's file as a URL: each path segment escaped, so a run named "a#b" or "a?b" still
  // points at its own file.
  function fileUrl(path) {
    return "files/" + path.split("/").map(encodeURIComponent).join("/");
  }

  function drawSweeps() {
    var holder = document.getElementById("sweeps");
    holder.replaceChildren();
    if (!state.data.sweeps.length) holder.appendChild(el("p", { text: "no sweep stores found" }));
    state.data.sweeps.forEach(function (sweep, n) {
      var plot = el("div", { id: "sweep-" + n, class: "plot sweep", "data-sweep": sweep.id });
      var info = el("div", { class: "sweep-point", id: "sweep-point-" + n,
        text: "click a point for its run and config" });
      var params = el("div", { class: "params" });
      holder.append(
        el("h3", { text: sweep.id + ": " + sweep.goal + " " + sweep.metric + ", " +
          sweep.points.length + " runs, " + sweep.failed + " failed; searched by " +
          COST_LABELS[sweep.cost] }),
        plot, info, params);
      if (sweep.error) {
        info.textContent = "store unreadable: " + sweep.error;
        info.classList.add("error");
      }
      drawSweep(sweep, plot, info);
      sweep.params.forEach(function (name, k) {
        var div = el("div", { id: "sweep-" + n + "-param-" + k, class: "param" });
        params.appendChild(div);
        drawParam(sweep, name, div);
      });
    });
  }

  function paramText(point) {
    return Object.keys(point.params).map(function (k) { return k + "=" + fmt(point.params[k]); })
      .join("<br>");
  }

  // The cost a sweep is drawn against: the one chosen above, else the one it searched by.
  function costKind(sweep) {
    return document.getElementById("cost").value || sweep.cost;
  }

  function drawSweep(sweep, plot, info) {
    var kind = costKind(sweep);
    // A store from before CPU time and steps were recorded has none for its runs.
    var shown = sweep.points.map(function (p, i) { return i; })
      .filter(function (i) { return sweep.points[i].costs[kind] !== null; });
    var pts = sweep.points;
    var front = sweep.fronts[kind];
    var cost = function (i) { return pts[i].costs[kind]; };
    var score = function (i) { return pts[i].score; };
    var text = function (i) { return paramText(pts[i]); };
    var hover = COST_LABELS[kind] + " %{x:.4g}<br>score %{y:.4g}<br>%{text}";
    var all = {
      type: "scatter", mode: "markers", name: "runs",
      x: shown.map(cost), y: shown.map(score), customdata: shown, text: shown.map(text),
      hovertemplate: hover + "<extra>run %{customdata}</extra>",
      marker: { color: "#457b9d", size: 8, opacity: 0.7 },
    };
    var pareto = {
      type: "scatter", mode: "lines+markers", name: "Pareto front", line: { shape: "hv" },
      x: front.map(cost), y: front.map(score), customdata: front, text: front.map(text),
      hovertemplate: hover + "<extra>front</extra>",
      marker: { color: "#e63946", size: 11, symbol: "diamond" },
    };
    var missing = pts.length - shown.length;
    var layout = {
      margin: { t: 20, r: 10, b: 45, l: 60 },
      xaxis: { title: { text: COST_LABELS[kind] + (missing ? " (" + missing +
        " runs of an older store record none)" : "") } },
      yaxis: { title: { text: sweep.metric } },
    };
    plot.dataset.cost = kind;
    Plotly.newPlot(plot, [all, pareto], layout, PLOT_CONFIG).then(function () {
      plot.on("plotly_click", function (event) {
        var point = pts[event.points[0].customdata];
        var parts = [el("span", { text: "run " + point.run_id + ": score " + fmt(point.score) +
          ", " + COST_LABELS[kind] + " " + fmt(point.costs[kind]) + "; " +
          Object.keys(point.params).map(function (k) {
            return k + "=" + fmt(point.params[k]);
          }).join(", ") + " " })];
        if (point.run) parts.push(el("a", { href: "#run-" + point.run, text: "open run",
          onclick: function (e) { e.preventDefault(); select(point.run); } }));
        info.replaceChildren.apply(info, parts);
      });
    });
  }

  function drawParam(sweep, name, div) {
    var xs = sweep.points.map(function (p) { return p.params[name]; });
    var numeric = xs.filter(function (v) { return typeof v === "number"; });
    var positive = numeric.length === xs.length && numeric.every(function (v) { return v > 0; });
    var wide = positive && Math.max.apply(null, numeric) / Math.min.apply(null, numeric) > 20;
    Plotly.newPlot(div, [{
      type: "scatter", mode: "markers", x: xs,
      y: sweep.points.map(function (p) { return p.score; }),
      marker: { color: "#1d3557", size: 7 },
    }], {
      margin: { t: 30, r: 10, b: 40, l: 50 }, title: { text: name, font: { size: 12 } },
      xaxis: { type: wide ? "log" : "linear" }, yaxis: { title: { text: sweep.metric } },
      showlegend: false,
    }, SMALL_PLOT);
  }

  return { start: start, select: select, state: state };
})();
