/* olmes site: the instance browser of an OLMES v0.2 generative task's page. Its data comes in script
   files (browsers refuse fetch on file://): the task's instances, and one file per model, loaded when
   the model is picked. Dataset text and generations are untrusted: they reach the page through
   textContent only. */
(function () {
  "use strict";
  var setupNode = document.getElementById("gen-browser-data");
  if (!setupNode) { return; }
  var setup = JSON.parse(setupNode.textContent);
  var root = document.getElementById("gen-browser");
  var pageSize = parseInt(root.getAttribute("data-page-size"), 10) || 5;
  var instances = null;
  var generations = {};  // model name -> {instance index: [generation, em, f1, extracted]}
  var loading = {};
  var page = 0;

  window.OLMES_GEN = {
    instances: function (rows) { instances = rows; render(); },
    model: function (name, data) { generations[name] = data; render(); }
  };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }

  function load(src) {
    var script = document.createElement("script");
    script.src = src;
    script.onerror = function () { console.error("olmes: cannot load " + src); };
    document.body.appendChild(script);
  }

  function picked() {
    var boxes = root.querySelectorAll(".gen-models input[type=checkbox]");
    var out = [];
    Array.prototype.forEach.call(boxes, function (box) {
      if (box.checked) { out.push(setup.models[parseInt(box.value, 10)]); }
    });
    return out;
  }

  function ensureLoaded(models) {
    models.forEach(function (model) {
      if (!generations[model.name] && !loading[model.name]) {
        loading[model.name] = true;
        load(model.file);
      }
    });
  }

  function pct(value) { return value === null || value === undefined ? "—" : (100 * value).toFixed(1); }

  function matches(item, models) {
    var query = document.getElementById("gen-search").value.trim().toLowerCase();
    if (query) {
      var text = [item.q || "", item.id || "", item.a.join(" ")].join(" ").toLowerCase();
      if (text.indexOf(query) < 0) { return false; }
    }
    var filter = document.getElementById("gen-filter").value;
    if (filter === "all") { return true; }
    var ems = models.map(function (model) {
      var row = (generations[model.name] || {})[String(item.i)];
      return row ? row[1] : null;
    }).filter(function (em) { return em !== null; });
    if (filter === "wrong") { return ems.some(function (em) { return em === 0; }); }
    if (filter === "disagree") { return ems.some(function (em) { return em !== ems[0]; }); }
    return true;
  }

  function instanceNode(item, models) {
    var node = el("article", "instance");
    var head = el("p", "muted small", "instance " + item.i + (item.id ? " · id " + item.id : ""));
    node.appendChild(head);
    if (item.q === null) {
      node.appendChild(el("p", "question muted", "question not available (neither the task's instances file nor its generation request file holds this instance)"));
    } else {
      node.appendChild(el("p", "question", item.q));
    }
    var gold = el("p", "gold-answers");
    gold.appendChild(el("span", "choice-label", "Gold: "));
    if (item.q === null && !item.a.length) { gold.appendChild(el("span", "muted", "not available")); }
    item.a.forEach(function (answer, k) {
      if (k) { gold.appendChild(document.createTextNode(" · ")); }
      gold.appendChild(el("code", "cont", answer));
    });
    node.appendChild(gold);
    // columns: model (fixed, its name wraps), generation (the rest), EM, F1 or the extracted answer
    var table = el("table", "preds gen-preds");
    var cols = el("colgroup");
    ["gen-col-model", "gen-col-text", "gen-col-num", setup.has_f1 ? "gen-col-num" : "gen-col-extracted"].forEach(function (cls) {
      cols.appendChild(el("col", cls));
    });
    table.appendChild(cols);
    var head2 = el("tr");
    ["Model", "Generation", "EM", setup.has_f1 ? "F1" : "Extracted"].forEach(function (label, k) {
      var th = el("th", k === 1 ? "gen-head-text" : null, label);
      th.setAttribute("scope", "col");
      head2.appendChild(th);
    });
    var thead = el("thead"); thead.appendChild(head2); table.appendChild(thead);
    var body = el("tbody");
    models.forEach(function (model) {
      var tr = el("tr");
      var th = el("th", "gen-model", model.display_name); th.setAttribute("scope", "row"); th.title = model.display_name;
      tr.appendChild(th);
      var data = generations[model.name];
      var row = data ? data[String(item.i)] : undefined;
      if (!data || !row) {
        var note = el("td", "muted gen-note", data ? "not generated" : "loading…");
        note.colSpan = 3;
        tr.appendChild(note);
      } else {
        var cell = el("td", "generation");
        if (row[0] === "") {
          cell.appendChild(el("span", "muted", "(empty generation)"));
        } else {
          cell.appendChild(el("pre", "gen-text", row[0]));  // whitespace kept and visible, as in the prompt
        }
        tr.appendChild(cell);
        tr.appendChild(el("td", row[1] ? "ok" : "bad", pct(row[1])));
        tr.appendChild(el("td", setup.has_f1 ? null : "extracted", setup.has_f1 ? pct(row[2]) : (row[3] === null ? "—" : row[3])));
      }
      body.appendChild(tr);
    });
    table.appendChild(body);
    node.appendChild(table);
    return node;
  }

  function render() {
    var list = document.getElementById("gen-list");
    var status = document.getElementById("gen-status");
    var models = picked();
    ensureLoaded(models);
    if (!instances) { status.textContent = "loading…"; return; }
    var shown = instances.filter(function (item) { return matches(item, models); });
    var pages = Math.max(1, Math.ceil(shown.length / pageSize));
    page = Math.min(page, pages - 1);
    list.textContent = "";
    shown.slice(page * pageSize, (page + 1) * pageSize).forEach(function (item) {
      list.appendChild(instanceNode(item, models));
    });
    status.textContent = shown.length ? (page + 1) + " / " + pages + " (" + shown.length + " instances)" : "no instance matches";
  }

  root.querySelector(".gen-models").addEventListener("change", function () { render(); });
  document.getElementById("gen-search").addEventListener("input", function () { page = 0; render(); });
  document.getElementById("gen-filter").addEventListener("change", function () { page = 0; render(); });
  document.getElementById("gen-prev").addEventListener("click", function () { page = Math.max(0, page - 1); render(); });
  document.getElementById("gen-next").addEventListener("click", function () { page += 1; render(); });
  load(setup.instances_file);
  render();
}());
