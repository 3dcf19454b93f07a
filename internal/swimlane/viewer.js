// aiperf analyze swim-lane --html: one run's swim lanes and concurrency,
// zoomable and pannable on a shared time axis, a request's details on
// hover. DATA is the run (internal/swimlane/html.go); nothing is fetched.
"use strict";
(function () {
  var D = DATA, R = D.req, N = R.S.length;
  var FAILED = "#d62728", WARMUP = "#a0a0a0", GAP = "#f0f0f0", ACTIVE = "#2196f3";
  var LEFT = 56, RIGHT = 14, AXIS = 24, CONC = 220, TOP = 8;
  var ROW = D.rows <= 40 ? 20 : D.rows <= 120 ? 12 : 7;
  var view = { x0: 0, x1: D.xMax };
  var lanesC = document.getElementById("lanes"), concC = document.getElementById("conc");
  var tip = document.getElementById("tip");

  // Each row's requests by start; in a row they never overlap, so their
  // ends are in order too.
  var rows = [];
  for (var r = 0; r < D.rows; r++) rows.push([]);
  for (var i = 0; i < N; i++) rows[R.Row[i]].push(i);
  rows.forEach(function (a) { a.sort(function (x, y) { return R.S[x] - R.S[y]; }); });
  // Each session's gaps between its requests (the union of their spans).
  var gaps = D.sessions.map(function () { return []; });
  (function () {
    var by = D.sessions.map(function () { return []; });
    for (var i = 0; i < N; i++) by[R.Sess[i]].push(i);
    by.forEach(function (reqs, s) {
      reqs.sort(function (x, y) { return R.S[x] - R.S[y]; });
      var end = -Infinity;
      reqs.forEach(function (q) {
        if (end > -Infinity && R.S[q] > end) gaps[s].push([end, R.S[q]]);
        end = Math.max(end, R.E[q]);
      });
    });
  })();

  function tint(hex, f) {
    var n = parseInt(hex.slice(1), 16), c = [n >> 16, (n >> 8) & 255, n & 255];
    return "rgb(" + c.map(function (x) { return Math.round(x + (255 - x) * f); }).join(",") + ")";
  }
  function colorOf(q) {
    if (R.Flag[q] & 1) return FAILED;
    if (R.Flag[q] & 2) return WARMUP;
    var s = D.sessions[R.Sess[q]];
    return tint(D.colors[D.lanes[s.lane].color], (s.sub ? 0.45 : 0) + (R.Turn[q] % 2 ? 0.3 : 0));
  }
  function fmt(x, digits) { return Number(x.toPrecision(digits || 4)).toString(); }

  // The time axis of a canvas w CSS pixels wide.
  function sx(t, w) { return LEFT + (t - view.x0) / (view.x1 - view.x0) * (w - LEFT - RIGHT); }
  function tx(x, w) { return view.x0 + (x - LEFT) / (w - LEFT - RIGHT) * (view.x1 - view.x0); }
  function ticks(lo, hi, n) {
    var raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), step = mag;
    [1, 2, 5, 10].some(function (m) { step = m * mag; return step >= raw; });
    var out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    return out;
  }
  function setup(c, h) {
    var w = c.clientWidth, dpr = window.devicePixelRatio || 1;
    c.style.height = h + "px";
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    var ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.font = "11px system-ui, sans-serif";
    return { ctx: ctx, w: w, h: h };
  }
  function xAxis(g, y) {
    var ctx = g.ctx;
    ctx.fillStyle = "#1b1f24"; ctx.strokeStyle = "#dddddd"; ctx.textAlign = "center"; ctx.textBaseline = "top";
    ticks(view.x0, view.x1, Math.max(2, Math.floor(g.w / 110))).forEach(function (t) {
      var x = sx(t, g.w);
      ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, y); ctx.stroke();
      ctx.fillText(fmt(t) + " s", x, y + 5);
    });
  }
  function vline(g, t, color, dash, bottom) {
    if (t === null || t < view.x0 || t > view.x1) return;
    var x = sx(t, g.w), ctx = g.ctx;
    ctx.save(); ctx.strokeStyle = color; ctx.lineWidth = 1.5; ctx.setLineDash(dash);
    ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, bottom); ctx.stroke(); ctx.restore();
  }

  function drawLanes() {
    var g = setup(lanesC, TOP + D.rows * ROW + AXIS), ctx = g.ctx, bottom = D.rows * ROW;
    ctx.translate(0, TOP);
    xAxis(g, bottom);
    ctx.save();
    ctx.beginPath(); ctx.rect(LEFT, 0, g.w - LEFT - RIGHT, bottom); ctx.clip();
    var bar = Math.max(2, ROW * 0.7), pad = (ROW - bar) / 2;
    function band(t0, t1, row0, n, color) {
      var a = Math.max(sx(t0, g.w), LEFT - 1), b = Math.min(sx(t1, g.w), g.w);
      if (b - a < 1) return;
      ctx.fillStyle = color; ctx.fillRect(a, row0 * ROW + pad, b - a, n * ROW - 2 * pad);
    }
    D.slots.forEach(function (sl, s) {
      var at = 0;
      D.lanes.forEach(function (ln) {
        if (ln.slot !== s) return;
        if (ln.first > at) band(at, ln.first, sl[0], sl[1], GAP);
        at = Math.max(at, ln.last);
      });
      band(at, D.xMax, sl[0], sl[1], GAP);
    });
    D.sessions.forEach(function (s, i) {
      var pale = tint(D.colors[D.lanes[s.lane].color], s.sub ? 0.85 : 0.75);
      gaps[i].forEach(function (gp) { band(gp[0], gp[1], s.row0, s.rows, pale); });
    });
    rows.forEach(function (reqs, row) { drawRow(ctx, g.w, reqs, row * ROW + pad, bar); });
    drawReuse(ctx, g.w, pad);
    ctx.restore();
    vline(g, D.ramp, "#ff9800", [6, 4], bottom);
    vline(g, D.bench, "#d32f2f", [6, 4], bottom);
    ctx.fillStyle = "#1b1f24"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
    var stride = D.slots.length > 150 ? 10 : D.slots.length > 60 ? 5 : D.slots.length > 30 ? 2 : 1;
    for (var s = 0; s < D.slots.length; s += stride) ctx.fillText(String(s), LEFT - 6, (D.slots[s][0] + D.slots[s][1] / 2) * ROW);
  }
  // drawRow paints a row's visible bars, joining what falls within a
  // pixel of the bar before it in the same colour; failed ones get a mark.
  function drawRow(ctx, w, reqs, y, h) {
    var lo = 0, hi = reqs.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (R.E[reqs[mid]] < view.x0) lo = mid + 1; else hi = mid; }
    var cur = null, a = 0, b = 0, marks = [];
    function flush() { if (cur) { ctx.fillStyle = cur; ctx.fillRect(a, y, b - a, h); } }
    for (var k = lo; k < reqs.length && R.S[reqs[k]] <= view.x1; k++) {
      var q = reqs[k], x0 = sx(R.S[q], w), x1 = Math.max(sx(R.E[q], w), x0 + 1), col = colorOf(q);
      if (R.Flag[q] & 1) marks.push(x1);
      if (cur === col && x0 - b < 1) { b = Math.max(b, x1); continue; }
      if (cur && x1 - b < 0.5) continue;
      flush();
      a = cur === null ? x0 : Math.max(x0, b); cur = col; b = x1;
    }
    flush();
    ctx.strokeStyle = "#600000"; ctx.lineWidth = 1.2;
    marks.forEach(function (x) {
      var m = y + h / 2, r = Math.min(3, h / 2);
      ctx.beginPath(); ctx.moveTo(x - r, m - r); ctx.lineTo(x + r, m + r); ctx.moveTo(x - r, m + r); ctx.lineTo(x + r, m - r); ctx.stroke();
    });
  }
  // drawReuse marks a slot taking its next session, and separates slots
  // when one has several rows.
  function drawReuse(ctx, w, pad) {
    var seen = {}, multi = D.slots.some(function (sl) { return sl[1] > 1; });
    ctx.strokeStyle = "#000"; ctx.lineWidth = 1.5;
    D.lanes.forEach(function (ln) {
      if (!seen[ln.slot]) { seen[ln.slot] = true; return; }
      var sl = D.slots[ln.slot], x = sx(ln.first, w);
      ctx.beginPath(); ctx.moveTo(x, sl[0] * ROW + pad); ctx.lineTo(x, (sl[0] + sl[1]) * ROW - pad); ctx.stroke();
    });
    if (!multi) return;
    ctx.strokeStyle = "#999"; ctx.lineWidth = 0.5;
    D.slots.forEach(function (sl, s) {
      if (s === 0) return;
      ctx.beginPath(); ctx.moveTo(LEFT, sl[0] * ROW); ctx.lineTo(w - RIGHT, sl[0] * ROW); ctx.stroke();
    });
  }

  function drawConc() {
    var g = setup(concC, CONC), ctx = g.ctx, bottom = CONC - AXIS, top = 8;
    var ymax = Math.max(D.peak, D.slotCount, D.target || 0, 1) * 1.15;
    function sy(v) { return bottom - v / ymax * (bottom - top); }
    xAxis(g, bottom);
    ctx.fillStyle = "#1b1f24"; ctx.textAlign = "right"; ctx.textBaseline = "middle"; ctx.strokeStyle = "#eeeeee";
    ticks(0, ymax, 5).forEach(function (v) {
      ctx.beginPath(); ctx.moveTo(LEFT, sy(v)); ctx.lineTo(g.w - RIGHT, sy(v)); ctx.stroke();
      ctx.fillText(fmt(v), LEFT - 6, sy(v));
    });
    ctx.save();
    ctx.beginPath(); ctx.rect(LEFT, 0, g.w - LEFT - RIGHT, bottom); ctx.clip();
    step(ctx, g.w, D.active, sy, ACTIVE, "rgba(33,150,243,0.3)");
    step(ctx, g.w, D.idle, sy, "#999999", null);
    hline(ctx, g.w, sy(D.slotCount), "#e53935", [2, 3]);
    if (D.target) hline(ctx, g.w, sy(D.target), "#2e9d32", [6, 4]);
    ctx.restore();
    vline(g, D.ramp, "#ff9800", [6, 4], bottom);
    vline(g, D.bench, "#d32f2f", [6, 4], bottom);
  }
  function hline(ctx, w, y, color, dash) {
    ctx.save(); ctx.strokeStyle = color; ctx.lineWidth = 1.2; ctx.setLineDash(dash);
    ctx.beginPath(); ctx.moveTo(LEFT, y); ctx.lineTo(w - RIGHT, y); ctx.stroke(); ctx.restore();
  }
  // step draws a step curve (its value holds until the next point).
  function step(ctx, w, c, sy, line, fill) {
    if (!c.t || !c.t.length) return;
    var pts = [[sx(c.t[0], w), sy(c.v[0])]];
    for (var i = 1; i < c.t.length; i++) {
      var x = sx(c.t[i], w);
      pts.push([x, pts[pts.length - 1][1]], [x, sy(c.v[i])]);
    }
    if (fill) {
      ctx.fillStyle = fill; ctx.beginPath(); ctx.moveTo(pts[0][0], sy(0));
      pts.forEach(function (p) { ctx.lineTo(p[0], p[1]); });
      ctx.lineTo(pts[pts.length - 1][0], sy(0)); ctx.closePath(); ctx.fill();
    }
    ctx.strokeStyle = line; ctx.lineWidth = 1; ctx.beginPath();
    pts.forEach(function (p, i) { if (i) ctx.lineTo(p[0], p[1]); else ctx.moveTo(p[0], p[1]); });
    ctx.stroke();
  }

  var pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      pending = false;
      drawLanes(); drawConc();
      document.getElementById("range").textContent = "showing " + fmt(view.x0) + " s to " + fmt(view.x1) + " s";
    });
  }

  // The request under the pointer on the lanes, within 2 pixels.
  function requestAt(x, y, w) {
    var row = Math.floor((y - TOP) / ROW);
    if (row < 0 || row >= D.rows) return -1;
    var reqs = rows[row], t = tx(x, w), slack = 2 * (view.x1 - view.x0) / (w - LEFT - RIGHT);
    var lo = 0, hi = reqs.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (R.E[reqs[mid]] < t - slack) lo = mid + 1; else hi = mid; }
    return lo < reqs.length && R.S[reqs[lo]] <= t + slack ? reqs[lo] : -1;
  }
  function describe(q) {
    var s = D.sessions[R.Sess[q]], lines = [
      "session " + s.id + (s.sub ? " (subagent)" : ""), "conversation " + s.conv + ", turn " + R.Turn[q],
      "slot " + D.lanes[s.lane].slot + (R.Flag[q] & 2 ? ", warmup" : ""),
      fmt(R.S[q], 6) + " s → " + fmt(R.E[q], 6) + " s (" + fmt((R.E[q] - R.S[q]) * 1000) + " ms)"];
    if (R.TTFT[q] >= 0) lines.push("TTFT " + R.TTFT[q] + " ms" + (R.Lat[q] >= 0 ? ", latency " + R.Lat[q] + " ms" : ""));
    if (R.ISL[q] >= 0 || R.OSL[q] >= 0) lines.push("ISL " + (R.ISL[q] >= 0 ? R.ISL[q] : "?") + ", OSL " + (R.OSL[q] >= 0 ? R.OSL[q] : "?"));
    if (R.Err[q] >= 0) lines.push("failed: " + (D.errors || [])[R.Err[q]]);
    return lines.join("\n");
  }
  function valueAt(c, t) {
    var lo = 0, hi = c.t ? c.t.length : 0;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (c.t[mid] <= t) lo = mid + 1; else hi = mid; }
    return lo ? c.v[lo - 1] : 0;
  }
  function showTip(ev, text) {
    if (!text) { tip.hidden = true; return; }
    tip.textContent = text; tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }

  function interact(c, hover) {
    var drag = null;
    c.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var w = c.clientWidth, t = tx(ev.offsetX, w), f = ev.deltaY > 0 ? 1.25 : 0.8;
      var span = Math.min(D.xMax, Math.max((view.x1 - view.x0) * f, 1e-4));
      var x0 = t - (t - view.x0) * span / (view.x1 - view.x0);
      view.x0 = Math.max(0, Math.min(x0, D.xMax - span)); view.x1 = view.x0 + span;
      redraw();
    }, { passive: false });
    c.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, x0: view.x0, x1: view.x1 }; c.classList.add("dragging"); });
    window.addEventListener("mouseup", function () { drag = null; c.classList.remove("dragging"); });
    c.addEventListener("mousemove", function (ev) {
      if (drag) {
        var span = drag.x1 - drag.x0, dt = (drag.x - ev.clientX) / (c.clientWidth - LEFT - RIGHT) * span;
        view.x0 = Math.max(0, Math.min(drag.x0 + dt, D.xMax - span)); view.x1 = view.x0 + span;
        redraw(); showTip(ev, null); return;
      }
      showTip(ev, hover(ev));
    });
    c.addEventListener("mouseleave", function (ev) { showTip(ev, null); });
    c.addEventListener("dblclick", reset);
  }
  function reset() { view.x0 = 0; view.x1 = D.xMax; redraw(); }

  function legend(id, entries) {
    var el = document.getElementById(id);
    entries.forEach(function (e) {
      var span = document.createElement("span"), sw = document.createElement("i");
      if (e.line) { sw.className = "line " + (e.dash || ""); sw.style.borderTopColor = e.line; } else sw.style.background = e.fill;
      span.appendChild(sw); span.appendChild(document.createTextNode(e.label)); el.appendChild(span);
    });
  }
  function init() {
    (D.notes || []).forEach(function (n) {
      var p = document.createElement("p"); p.className = "note"; p.textContent = n;
      document.getElementById("notes").appendChild(p);
    });
    var base = D.colors[0], failed = false, warm = false, sub = D.sessions.some(function (s) { return s.sub; });
    for (var i = 0; i < N; i++) { failed = failed || !!(R.Flag[i] & 1); warm = warm || !!(R.Flag[i] & 2); }
    legend("legend", [{ fill: base, label: "Request (even turn)" }, { fill: tint(base, 0.3), label: "Request (odd turn)" }]
      .concat(sub ? [{ fill: tint(base, 0.45), label: "Subagent request" }] : [])
      .concat([{ fill: tint(base, 0.75), label: "Inter-turn delay" }])
      .concat(failed ? [{ fill: FAILED, label: "Failed request (× at its end)" }] : [])
      .concat(warm ? [{ fill: WARMUP, label: "Warmup request" }] : [])
      .concat([{ line: "#000", label: "New session in slot" }]));
    legend("conc-legend", [{ fill: "rgba(33,150,243,0.5)", label: "Active requests (peak " + D.peak + ")" },
      { line: "#999", label: "Idle sessions (between turns)" }, { line: "#e53935", dash: "dotted", label: "Slot count (" + D.slotCount + ")" }]
      .concat(D.target ? [{ line: "#2e9d32", dash: "dashed", label: "Target concurrency (" + D.target + ")" }] : [])
      .concat(D.ramp !== null ? [{ line: "#ff9800", dash: "dashed", label: "Ramp done (" + fmt(D.rampDur) + "s)" }] : [])
      .concat(D.bench !== null ? [{ line: "#d32f2f", dash: "dashed", label: "Benchmark end (" + fmt(D.benchDur) + "s)" }] : []));
    interact(lanesC, function (ev) { var q = requestAt(ev.offsetX, ev.offsetY, lanesC.clientWidth); return q < 0 ? null : describe(q); });
    interact(concC, function (ev) {
      var t = tx(ev.offsetX, concC.clientWidth);
      return "t = " + fmt(t) + " s\nactive requests " + valueAt(D.active, t) + "\nidle sessions " + valueAt(D.idle, t);
    });
    document.getElementById("reset").addEventListener("click", reset);
    window.addEventListener("resize", redraw);
    redraw();
  }
  init();
})();
