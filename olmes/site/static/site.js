/* olmes site: sortable tables, row filters and chart rendering. Vanilla JS, no network. */
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.children[index];
    if (!cell) return "";
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  }

  function sortTable(table, index, type, direction) {
    var factor = direction === "ascending" ? 1 : -1;
    Array.prototype.forEach.call(table.tBodies, function (body) {
      var rows = Array.prototype.filter.call(body.rows, function (row) {
        return !row.classList.contains("group-label");
      });
      rows.forEach(function (row, position) { row.dataset.position = String(position); });
      rows.sort(function (a, b) {
        var x = cellValue(a, index), y = cellValue(b, index);
        if (type === "num") {
          var nx = x === "" ? NaN : parseFloat(x), ny = y === "" ? NaN : parseFloat(y);
          if (isNaN(nx) && isNaN(ny)) return a.dataset.position - b.dataset.position;
          if (isNaN(nx)) return 1;   /* missing values always last */
          if (isNaN(ny)) return -1;
          if (nx !== ny) return factor * (nx - ny);
          return a.dataset.position - b.dataset.position;
        }
        var order = x.localeCompare(y, undefined, { sensitivity: "base", numeric: true });
        return order !== 0 ? factor * order : a.dataset.position - b.dataset.position;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  }

  function initSortable(table) {
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, index) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var type = button.getAttribute("data-type") || "num";
        var current = th.getAttribute("aria-sort");
        var first = type === "num" && !button.hasAttribute("data-asc") ? "descending" : "ascending";
        var next = current === first ? (first === "ascending" ? "descending" : "ascending") : first;
        Array.prototype.forEach.call(headers, function (other) {
          if (other.hasAttribute("aria-sort")) other.setAttribute("aria-sort", "none");
        });
        th.setAttribute("aria-sort", next);
        sortTable(table, index, type, next);
      });
    });
  }

  function initFilter(input) {
    var table = document.getElementById(input.getAttribute("data-filter-table"));
    if (!table) return;
    var empty = document.getElementById(table.id + "-empty");
    function apply() {
      var needle = input.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies, function (body) {
        var visibleInBody = 0;
        Array.prototype.forEach.call(body.rows, function (row) {
          if (row.classList.contains("group-label")) return;
          var name = row.getAttribute("data-name") || row.textContent.toLowerCase();
          var match = needle === "" || name.indexOf(needle) !== -1;
          row.hidden = !match;
          if (match) { visibleInBody += 1; shown += 1; }
        });
        Array.prototype.forEach.call(body.querySelectorAll("tr.group-label"), function (row) {
          row.hidden = visibleInBody === 0;
        });
      });
      if (empty) empty.hidden = shown !== 0;
    }
    input.addEventListener("input", apply);
    apply();
  }

  /* A checkbox that shows or hides a table's reported rows (a class on the table, so that it and the
     name filter, which sets row.hidden, never undo each other). */
  function initReportedToggle(input) {
    var table = document.getElementById(input.getAttribute("data-toggle-reported"));
    if (!table) return;
    function apply() { table.classList.toggle("hide-reported", !input.checked); }
    input.addEventListener("change", apply);
    apply();
  }

  function renderCharts() {
    var charts = document.querySelectorAll(".chart[data-spec]");
    Array.prototype.forEach.call(charts, function (element) {
      var source = document.getElementById(element.getAttribute("data-spec"));
      if (!source || typeof window.vegaEmbed !== "function") {
        element.textContent = "The chart library did not load.";
        element.classList.add("chart-error");
        return;
      }
      var spec = JSON.parse(source.textContent);
      window.vegaEmbed(element, spec, { mode: "vega-lite", renderer: "svg", actions: false, tooltip: true })
        .then(function () { element.setAttribute("data-rendered", "true"); })
        .catch(function (error) {
          element.textContent = "The chart could not be drawn: " + error;
          element.classList.add("chart-error");
          console.error(error);
        });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), initSortable);
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter-table]"), initFilter);
    Array.prototype.forEach.call(document.querySelectorAll("input[data-toggle-reported]"), initReportedToggle);
  });

  window.OLMES = { renderCharts: renderCharts, sortTable: sortTable };
})();
