// aiperf report: sort tables by a column, show and hide a figure's series.
"use strict";
(function () {
  // A cell's sort key: its leading number when it has one ("12.3 ± 0.4",
  // "+5.0%"), else its text.
  function key(td) {
    var t = td ? td.textContent.trim() : "";
    var m = t.match(/^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?/);
    return m ? { n: parseFloat(m[0]), t: t } : { n: NaN, t: t };
  }
  function compare(a, b) {
    if (!isNaN(a.n) && !isNaN(b.n)) return a.n - b.n;
    if (!isNaN(a.n)) return -1;
    if (!isNaN(b.n)) return 1;
    return a.t < b.t ? -1 : a.t > b.t ? 1 : 0;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("asc");
        heads.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var keys = new Map(rows.map(function (r) { return [r, key(r.cells[col])]; }));
        rows.sort(function (a, b) { var c = compare(keys.get(a), keys.get(b)); return asc ? c : -c; });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // A series is drawn in its own colour: hiding it hides every shape of
  // the figure stroked or filled with that colour. The colours are read
  // once, before any change to an element's style (which the browser then
  // writes back in another form).
  document.querySelectorAll("figure.plot svg [style]").forEach(function (el) {
    var found = el.getAttribute("style").toUpperCase().match(/(STROKE|FILL):#[0-9A-F]{6}/g);
    if (found) el.setAttribute("data-colours", found.map(function (f) { return f.split(":")[1]; }).join(" "));
  });
  document.querySelectorAll("figure.plot input[data-color]").forEach(function (box) {
    box.addEventListener("change", function () {
      var colour = box.dataset.color.toUpperCase();
      var svg = box.closest("figure").querySelector("svg");
      svg.querySelectorAll("[data-colours]").forEach(function (el) {
        if (el.getAttribute("data-colours").split(" ").indexOf(colour) >= 0) {
          el.style.display = box.checked ? "" : "none";
        }
      });
    });
  });
})();
