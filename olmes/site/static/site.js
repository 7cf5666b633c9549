/* olmes site: sortable tables, row filters and chart rendering. Vanilla JS, no network. */
(function () {
  "use strict";

  var collator = new Intl.Collator(undefined, { sensitivity: "base", numeric: true });

  function cellValue(row, index) {
    var cell = row.children[index];
    if (!cell) return "";
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  }

  /* Sort each body's rows by one column: every row's key is read once (no DOM read per comparison),
     then the rows are appended in their new order in one go. Missing values always go last; ties
     keep their current order. */
  function sortTable(table, index, type, direction) {
    materialize(table);
    var factor = direction === "ascending" ? 1 : -1;
    Array.prototype.forEach.call(table.tBodies, function (body) {
      var entries = [];
      Array.prototype.forEach.call(body.rows, function (row) {
        if (row.classList.contains("group-label")) return;
        var text = cellValue(row, index);
        var key = type === "num" ? (text === "" ? NaN : parseFloat(text)) : text;
        entries.push({ row: row, key: key, position: entries.length });
      });
      entries.sort(function (a, b) {
        var order;
        if (type === "num") {
          var missingA = isNaN(a.key), missingB = isNaN(b.key);
          if (missingA || missingB) order = missingA === missingB ? 0 : (missingA ? 1 : -1) * factor;
          else order = a.key - b.key;
        } else {
          order = collator.compare(a.key, b.key);
        }
        return order !== 0 ? factor * order : a.position - b.position;
      });
      var fragment = document.createDocumentFragment();
      entries.forEach(function (entry) { fragment.appendChild(entry.row); });
      body.appendChild(fragment);
    });
    if (table.hasAttribute("data-open-rows")) markBeyond(table);
  }

  /* A long table (data-open-rows="N") shows its first N rows until the reader asks for all: rows past
     them carry the class "beyond", hidden while the table is "collapsed" (rows not shown are not laid
     out, which is most of a 540-row table's first render). Re-marked after a sort and when reported
     rows are hidden; a name filter shows every match. */
  /* A long table's later rows arrive as the text of script elements (the browser parses no HTML for
     them before its first render); they become rows the first time the table is unfolded, sorted or
     filtered. The text is the HTML the server escaped, as for every other row. */
  function materialize(table) {
    Array.prototype.forEach.call(table.querySelectorAll("script.later-rows"), function (script) {
      script.insertAdjacentHTML("beforebegin", script.textContent);
      script.parentNode.removeChild(script);
    });
  }

  function markBeyond(table) {
    var limit = parseInt(table.getAttribute("data-open-rows"), 10);
    var hideReported = table.classList.contains("hide-reported");
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        if (row.classList.contains("group-label")) return;
        var counted = !(hideReported && row.classList.contains("is-reported"));
        if (counted) shown += 1;
        row.classList.toggle("beyond", counted && shown > limit);
      });
    });
  }

  function initShowAll(button) {
    var table = document.getElementById(button.getAttribute("data-show-all"));
    if (!table) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      materialize(table);
      var collapsed = table.classList.toggle("collapsed");
      button.textContent = button.getAttribute(collapsed ? "data-more" : "data-less");
      button.setAttribute("aria-expanded", String(!collapsed));
    });
  }

  /* A header's sort button; the column is the header's place when clicked (a page may add columns). */
  function initSortHeader(table, th) {
    var button = th.querySelector("button");
    if (!button) return;
    button.addEventListener("click", function () {
      var type = button.getAttribute("data-type") || "num";
      var current = th.getAttribute("aria-sort");
      var first = type === "num" && !button.hasAttribute("data-asc") ? "descending" : "ascending";
      var next = current === first ? (first === "ascending" ? "descending" : "ascending") : first;
      Array.prototype.forEach.call(th.parentNode.cells, function (other) {
        if (other.hasAttribute("aria-sort")) other.setAttribute("aria-sort", "none");
      });
      th.setAttribute("aria-sort", next);
      sortTable(table, th.cellIndex, type, next);
    });
  }

  function initSortable(table) {
    if (!table.tHead) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { initSortHeader(table, th); });
  }

  function initFilter(input) {
    var table = document.getElementById(input.getAttribute("data-filter-table"));
    if (!table) return;
    var empty = document.getElementById(table.id + "-empty");
    function apply() {
      var needle = input.value.trim().toLowerCase();
      if (needle !== "") materialize(table);
      table.classList.toggle("filtering", needle !== "");
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
    function apply() {
      table.classList.toggle("hide-reported", !input.checked);
      if (table.hasAttribute("data-open-rows")) {
        if (!input.checked) materialize(table);  /* the first rows shown may now come from later ones */
        markBeyond(table);
      }
    }
    input.addEventListener("change", apply);
    apply();
  }

  /* How far from a box's left edge the columns of its table that stick to the left reach (the
     leaderboard's names), or 0 when none does: where the box's left shadow starts. */
  function stickyInset(box) {
    var table = box.querySelector("table"), left = box.getBoundingClientRect().left, inset = 0;
    if (!table || !table.rows.length) return 0;
    Array.prototype.forEach.call(table.rows[0].cells, function (cell) {
      var style = window.getComputedStyle(cell);
      if (style.position === "sticky" && style.left !== "auto") {
        inset = Math.max(inset, cell.getBoundingClientRect().right - left);
      }
    });
    return inset;
  }

  /* A box that scrolls sideways (.scroll, .chart-scroll) shows when its content is wider than it: the
     box goes into a .scroll-frame whose classes more-left and more-right draw a shadow over each edge
     that content is hidden past (style.css), and a hint after the frame says which way it scrolls.
     Kept right on scroll, when the box is resized (the window) and when its content changes (a sort,
     "Show all", reported rows hidden, a name filter, columns added, a chart drawn again): each
     checked once, in the next frame. Without scripts the box's own backgrounds show the shadows. */
  function initScrollSign(box) {
    var frame = document.createElement("div"), hint = document.createElement("p"), waiting = false;
    frame.className = "scroll-frame";
    hint.className = "scroll-hint";
    hint.setAttribute("aria-hidden", "true");  /* what it says is seen; a screen reader reads the cells */
    box.parentNode.insertBefore(frame, box);
    frame.appendChild(box);
    frame.parentNode.insertBefore(hint, frame.nextSibling);
    function update() {
      waiting = false;
      var end = box.scrollWidth - box.clientWidth;
      var left = box.scrollLeft > 1, right = box.scrollLeft < end - 1, inset = stickyInset(box);
      frame.classList.toggle("more-left", left);
      frame.classList.toggle("more-right", right);
      frame.classList.toggle("sticky-left", inset > 0);
      frame.style.setProperty("--scroll-inset", inset + "px");
      hint.hidden = !left && !right;
      hint.textContent = (left ? "← " : "") + "scroll" + (right ? " →" : "");
    }
    function later() {
      if (!waiting) { waiting = true; window.requestAnimationFrame(update); }
    }
    box.addEventListener("scroll", later, { passive: true });
    if (window.ResizeObserver) new window.ResizeObserver(later).observe(box);
    else window.addEventListener("resize", later);
    new MutationObserver(later).observe(box, {
      childList: true, subtree: true, attributes: true, attributeFilter: ["class", "hidden"]
    });
    update();
  }

  function chartError(element, text) {
    element.textContent = text;
    element.classList.add("chart-error");
  }

  /* A script element for src (chart data and libraries come as scripts: browsers refuse fetch on
     file://); loaded() once it has run, failed() if it did not load. */
  function loadScript(src, loaded, failed) {
    var script = document.createElement("script");
    script.src = src;
    script.onload = loaded;
    script.onerror = failed;
    document.head.appendChild(script);
  }

  /* Draw spec with vega; resolves to whether it was drawn (if not, the chart says why). */
  function drawChart(element, spec) {
    return window.vegaEmbed(element, spec, { mode: "vega-lite", renderer: "svg", actions: false, tooltip: true })
      .then(function () { return true; })
      .catch(function (error) {
        chartError(element, "The chart could not be drawn: " + error);
        console.error(error);
        return false;
      });
  }

  /* The chart libraries (initCharts' sources, in order), loaded once, when first needed: each chart
     shows at first the SVG drawn when the site was built, and is drawn live only for a reader who
     moves onto it (its tooltips) or picks a model. done(true) once vegaEmbed is there, done(false) if
     a library did not load. */
  var chartLibraries = [], librariesWaiting = null;
  function withChartLibraries(done) {
    if (typeof window.vegaEmbed === "function") { done(true); return; }
    if (librariesWaiting) { librariesWaiting.push(done); return; }
    librariesWaiting = [done];
    function finish(loaded) {
      var waiting = librariesWaiting;
      librariesWaiting = null;
      waiting.forEach(function (callback) { callback(loaded); });
    }
    (function next(k) {
      if (k === chartLibraries.length) { finish(typeof window.vegaEmbed === "function"); return; }
      loadScript(chartLibraries[k], function () { next(k + 1); }, function () { finish(false); });
    })(0);
  }

  /* Draw spec() live into element, after any drawing of it still under way; failed() if the chart
     libraries did not load (the built SVG stays). data-rendered is "true" once the last drawing asked
     for is done ("static" before any: the SVG drawn when the site was built). */
  function drawLive(element, spec, failed) {
    var before = element.getAttribute("data-rendered");
    element.setAttribute("data-live", "true");
    element.removeAttribute("data-rendered");
    element.pending = (element.pending || 0) + 1;
    withChartLibraries(function (loaded) {
      if (!loaded) {
        element.pending -= 1;
        if (before) element.setAttribute("data-rendered", before);
        failed();
        return;
      }
      element.drawing = (element.drawing || Promise.resolve())
        .then(function () { return drawChart(element, spec()); })
        .then(function (drawn) {
          element.pending -= 1;
          if (drawn && element.pending === 0) element.setAttribute("data-rendered", "true");
        });
    });
  }

  /* The spec a chart shows now: the spec it was built with, the rows of the models its reader picked
     (initPicker sets element.pickedRows), less the rows of the paper's reported models while its
     checkbox hides them (initChartReportedToggle sets element.hideReported). */
  function currentSpec(element) {
    var spec = JSON.parse(document.getElementById(element.getAttribute("data-spec")).textContent);
    if (element.pickedRows) spec.data.values = spec.data.values.concat(element.pickedRows());
    if (element.hideReported) {
      spec.data.values = spec.data.values.filter(function (row) { return !row.reported; });
    }
    return spec;
  }

  function initCharts(sources) {
    chartLibraries = sources;
    Array.prototype.forEach.call(document.querySelectorAll(".chart[data-spec]"), function (element) {
      var source = document.getElementById(element.getAttribute("data-spec"));
      if (!source) return;
      function live() {
        ["pointerenter", "focusin", "touchstart"].forEach(function (kind) { element.removeEventListener(kind, live); });
        if (element.hasAttribute("data-live")) return;  /* a pick drew it already */
        drawLive(element, function () { return currentSpec(element); }, function () {
          console.error("The chart library did not load; the chart stays as first drawn.");
        });
      }
      ["pointerenter", "focusin", "touchstart"].forEach(function (kind) {
        element.addEventListener(kind, live, { passive: true });
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll(".picker[data-chart]"), initPicker);
    Array.prototype.forEach.call(document.querySelectorAll("input[data-toggle-reported-chart]"), initChartReportedToggle);
  }

  /* A checkbox that takes the paper's reported models out of a chart, or puts them back: the chart is
     drawn again live (the built SVG shows them all). */
  function initChartReportedToggle(input) {
    var element = document.getElementById(input.getAttribute("data-toggle-reported-chart"));
    if (!element) return;
    input.addEventListener("change", function () {
      element.hideReported = !input.checked;
      drawLive(element, function () { return currentSpec(element); }, function () {
        input.checked = !element.hideReported;
        element.hideReported = false;
        input.disabled = true;
        console.error("The chart library did not load; the chart shows every model.");
      });
    });
  }

  /* charts/<id>.js (window.OLMES_CHART_DATA[id]: the rows of the models not drawn at first), loaded
     once, on the first pick. */
  function loadChartData(picker, id, done) {
    var store = window.OLMES_CHART_DATA || {};
    if (store[id]) { done(store[id]); return; }
    loadScript(picker.getAttribute("data-src"), function () { done((window.OLMES_CHART_DATA || {})[id]); },
               function () { done(null); });
  }

  function pickedRows(data, name) {
    return (data.rows[name] || []).map(function (values) {
      var row = {};
      row[data.key] = name;
      data.fields.forEach(function (field, k) { row[field] = values[k]; });
      return row;
    });
  }

  /* The picked model's columns in the table of the chart's numbers, as the picker's data-table-*
     attributes name them: a column per value of data-table-column (e.g. CF, MCF), the value
     data-table-value of the row whose data-name is the lower-cased data-table-row (e.g. a subject). */
  function addTableColumns(picker, table, name, rows) {
    var rowField = picker.getAttribute("data-table-row"), valueField = picker.getAttribute("data-table-value");
    var columnField = picker.getAttribute("data-table-column");
    var columns = {};
    rows.forEach(function (row) {
      var column = columns[row[columnField]] || (columns[row[columnField]] = {});
      column[String(row[rowField]).toLowerCase()] = row[valueField];
    });
    Object.keys(columns).sort().forEach(function (label) {
      var th = document.createElement("th");
      th.scope = "col";
      th.className = "num";
      th.setAttribute("aria-sort", "none");
      th.setAttribute("data-model", name);
      var button = document.createElement("button");
      button.type = "button";
      button.setAttribute("data-type", "num");
      button.textContent = name + " " + label;
      th.appendChild(button);
      table.tHead.rows[0].appendChild(th);
      initSortHeader(table, th);
      Array.prototype.forEach.call(table.tBodies, function (body) {
        Array.prototype.forEach.call(body.rows, function (tr) {
          var value = columns[label][tr.getAttribute("data-name")];
          var td = document.createElement("td");
          td.className = "num";
          td.setAttribute("data-model", name);
          td.setAttribute("data-sort", value === undefined ? "" : String(value));
          td.textContent = value === undefined ? "–" : value.toFixed(1);
          tr.appendChild(td);
        });
      });
    });
  }

  function removeTableColumns(table, name) {
    Array.prototype.forEach.call(table.querySelectorAll("[data-model]"), function (cell) {
      if (cell.getAttribute("data-model") === name) cell.remove();
    });
  }

  /* A chart's picker: a name (from the datalist of every other model) adds that model's rows to the
     chart, which is drawn again; each added model is listed with a button that takes it out. */
  function initPicker(picker) {
    var id = picker.getAttribute("data-chart");
    var element = document.getElementById(id);
    var source = document.getElementById(id + "-spec");
    var input = picker.querySelector(".picker-input");
    if (!element || !source || !input) return;
    var list = picker.querySelector(".picked"), status = picker.querySelector(".picker-status");
    var table = document.getElementById(picker.getAttribute("data-table") || "");
    var picked = [];

    function redraw(data) {
      element.setAttribute("data-picked", picked.join("\n"));
      element.pickedRows = function () {
        return picked.reduce(function (rows, name) { return rows.concat(pickedRows(data, name)); }, []);
      };
      drawLive(element, function () { return currentSpec(element); }, function () { status.textContent = "The chart library did not load; the chart shows its first models."; });
    }

    function add(name) {
      loadChartData(picker, id, function (data) {
        if (!data) { status.textContent = "The data of the other models did not load."; return; }
        if (!Object.prototype.hasOwnProperty.call(data.rows, name)) {
          status.textContent = "No other model is named “" + name + "”: pick one from the list.";
          return;
        }
        input.value = "";
        if (picked.indexOf(name) !== -1) return;
        picked.push(name);
        status.textContent = "Added " + name + ".";
        var item = document.createElement("li");
        item.textContent = name + " ";
        var remove = document.createElement("button");
        remove.type = "button";
        remove.textContent = "×";
        remove.setAttribute("aria-label", "Remove " + name);
        remove.addEventListener("click", function () {
          picked.splice(picked.indexOf(name), 1);
          item.remove();
          if (table) removeTableColumns(table, name);
          status.textContent = "Removed " + name + ".";
          redraw(data);
        });
        item.appendChild(remove);
        list.appendChild(item);
        if (table) addTableColumns(picker, table, name, pickedRows(data, name));
        redraw(data);
      });
    }

    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && input.value.trim()) { event.preventDefault(); add(input.value.trim()); }
    });
    input.addEventListener("input", function (event) {  /* a choice from the datalist */
      if (event.inputType === "insertReplacementText" || event.inputType === undefined) add(input.value.trim());
    });
    picker.querySelector(".picker-add").addEventListener("click", function () {
      if (input.value.trim()) add(input.value.trim());
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), initSortable);
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter-table]"), initFilter);
    Array.prototype.forEach.call(document.querySelectorAll("input[data-toggle-reported]"), initReportedToggle);
    Array.prototype.forEach.call(document.querySelectorAll("button[data-show-all]"), initShowAll);
    /* last: the first sign sees each table as the inits above leave it */
    Array.prototype.forEach.call(document.querySelectorAll(".scroll, .chart-scroll"), initScrollSign);
  });

  window.OLMES = { initCharts: initCharts, sortTable: sortTable };
})();
