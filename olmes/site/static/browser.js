/* olmes instance browser. The page embeds what it needs to start (#browser-data: methods, the models
   scored on the task with their data files, the instance pieces, the models picked at first); the
   data comes in script files, since browsers refuse fetch on file://: the instances in pieces
   (OLMES_BROWSER.addInstances) and one file per model (OLMES_BROWSER.addModel), loaded only when the
   model is picked. The first screen is drawn from the first piece; the others load after it.
   Dataset text and model names are untrusted: every string reaches the page through textContent. */
(function () {
  "use strict";
  var root = document.getElementById("browser");
  var embedded = document.getElementById("browser-data");
  if (!root || !embedded) return;
  var meta = JSON.parse(embedded.textContent);

  var pageSize = parseInt(root.getAttribute("data-page-size"), 10) || 10;
  var list = document.getElementById("browser-list");
  var search = document.getElementById("browser-search");
  var subject = document.getElementById("browser-subject");
  var filter = document.getElementById("browser-filter");
  var prev = document.getElementById("browser-prev");
  var next = document.getElementById("browser-next");
  var status = document.getElementById("browser-status");
  var pickedBox = document.getElementById("browser-picked");
  var modelSearch = document.getElementById("browser-model-search");
  var modelOptions = document.getElementById("browser-model-options");

  var instances = [];      // in instance order, as the pieces arrive
  var haystacks = [];      // lower-cased text of each instance, for the search
  var piecesLoaded = 0;
  var loadedModels = {};   // model name -> its picks (decoded addModel data)
  var modelsByName = {};
  meta.models.forEach(function (model) { modelsByName[model.name] = model; });
  var picked = meta.picked.slice();
  var page = 0;
  var matches = [];
  var started = false;

  function letter(position) { return String.fromCharCode(65 + position); }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function loadScript(src, done) {
    var script = document.createElement("script");
    script.src = src;
    script.onload = done;
    script.onerror = function () { console.error("olmes: cannot load " + src); };
    document.body.appendChild(script);
  }

  /* What the data files call. */
  window.OLMES_BROWSER = {
    addInstances: function (number, items) {
      if (number !== piecesLoaded) return;  // pieces load one after the other, in order
      items.forEach(function (item) {
        instances.push(item);
        haystacks.push([item.q, item.c.join("\n"), String(item.id), item.s || "", "#" + item.i].join("\n").toLowerCase());
      });
      piecesLoaded += 1;
    },
    addModel: function (name, picks) {
      var offsets = [];  // [start, stop, offset of start] of each range of scored instance indices
      var total = 0;
      picks.ranges.forEach(function (range) {
        offsets.push([range[0], range[1], total]);
        total += range[1] - range[0];
      });
      var ties = {};
      Object.keys(picks.near_ties).forEach(function (method) {
        var set = {};
        picks.near_ties[method].forEach(function (index) { set[index] = true; });
        ties[method] = set;
      });
      loadedModels[name] = { offsets: offsets, predictions: picks.predictions, ties: ties };
    }
  };

  function loadModel(name, done) {
    if (loadedModels[name]) { done(); return; }
    loadScript(modelsByName[name].file, done);
  }

  function loadNextPiece(done) {
    loadScript(meta.instance_files[piecesLoaded], done);
  }

  /* The model's pick on an instance under a method; -1 where it has none (or is not loaded yet). */
  function prediction(name, method, item) {
    var model = loadedModels[name];
    var values = model && model.predictions[method];
    if (!values) return -1;
    for (var k = 0; k < model.offsets.length; k += 1) {
      var range = model.offsets[k];
      if (item.i >= range[0] && item.i < range[1]) return values[range[2] + item.i - range[0]];
    }
    return -1;
  }

  function nearTie(name, method, item) {
    var model = loadedModels[name];
    return Boolean(model && model.ties[method] && model.ties[method][item.i]);
  }

  function shown() {
    return picked.filter(function (name) { return loadedModels[name]; });
  }

  function keep(item) {
    var mode = filter.value;
    var names = shown();
    if (mode === "ties") {
      return names.some(function (name) {
        return meta.methods.some(function (method) { return nearTie(name, method, item); });
      });
    }
    if (mode === "wrong") {
      return names.some(function (name) {
        var value = prediction(name, modelsByName[name].decisive, item);
        return value >= 0 && value !== item.g;
      });
    }
    if (mode === "cfmcf") {
      return names.some(function (name) {
        var cf = prediction(name, meta.recommended, item);
        var mcf = prediction(name, "mcf", item);
        return cf >= 0 && mcf >= 0 && cf !== mcf;
      });
    }
    if (mode === "disagree") {
      var seen = {};
      names.forEach(function (name) {
        meta.methods.forEach(function (method) {
          var value = prediction(name, method, item);
          if (value >= 0) seen[value] = true;
        });
      });
      return Object.keys(seen).length > 1;
    }
    return true;
  }

  /* The matching instances among those loaded; ``keepPage`` keeps the reader's page (a piece arrived). */
  function recompute(keepPage) {
    var needle = search.value.trim().toLowerCase();
    var wanted = subject ? subject.value : "";
    matches = [];
    for (var position = 0; position < instances.length; position += 1) {
      if (needle && haystacks[position].indexOf(needle) === -1) continue;
      if (wanted && instances[position].s !== wanted) continue;
      if (!keep(instances[position])) continue;
      matches.push(position);
    }
    if (!keepPage) page = 0;
    render();
  }

  function predictionTable(item) {
    var table = el("table", "preds");
    var thead = el("thead");
    var headRow = el("tr");
    headRow.appendChild(el("th", null, "Model"));
    meta.methods.forEach(function (method) {
      headRow.appendChild(el("th", method === meta.recommended ? "rec-col" : "", meta.method_labels[method]));
    });
    thead.appendChild(headRow);
    table.appendChild(thead);
    var body = el("tbody");
    shown().forEach(function (name) {
      var row = el("tr");
      row.appendChild(el("th", null, modelsByName[name].display_name));
      meta.methods.forEach(function (method) {
        var value = prediction(name, method, item);
        var cell;
        if (value < 0) {
          cell = el("td", "none", "—");
          cell.title = "not scored";
        } else {
          var right = value === item.g;
          var tie = nearTie(name, method, item);
          cell = el("td", right ? "right" : "wrong", letter(value) + (right ? " ✓" : " ✗") + (tie ? " ≈" : ""));
          cell.title = (right ? "correct" : "wrong") + (tie ? "; near tie (top two within " + meta.near_tie_nats + ")" : "");
        }
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
    table.appendChild(body);
    var wrap = el("div", "preds-wrap");
    wrap.appendChild(table);
    return wrap;
  }

  function renderInstance(item) {
    var card = el("article", "instance");
    card.setAttribute("data-index", String(item.i));
    var head = el("div", "instance-head");
    head.appendChild(el("span", null, "instance " + item.i));
    head.appendChild(el("span", null, "native id " + item.id));
    if (item.s) head.appendChild(el("span", "subject", item.s.replace(/_/g, " ")));
    card.appendChild(head);
    card.appendChild(el("p", "question", item.q));
    var choices = el("ol", "choices");
    item.c.forEach(function (text, choice) {
      var li = el("li", choice === item.g ? "gold" : "");
      li.appendChild(el("span", "letter", letter(choice)));
      li.appendChild(el("span", "choice-text", text));
      if (choice === item.g) li.appendChild(el("span", "gold-mark", "✓ gold"));
      choices.appendChild(li);
    });
    card.appendChild(choices);
    if (shown().length) card.appendChild(predictionTable(item));
    return card;
  }

  function render() {
    var pages = Math.max(1, Math.ceil(matches.length / pageSize));
    if (page >= pages) page = pages - 1;
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!matches.length) list.appendChild(el("p", "empty", "No instance matches."));
    matches.slice(page * pageSize, (page + 1) * pageSize).forEach(function (position) {
      list.appendChild(renderInstance(instances[position]));
    });
    var loading = piecesLoaded < meta.instance_files.length
      ? " (loading: " + piecesLoaded + " of " + meta.instance_files.length + " pieces)" : "";
    status.textContent = (matches.length
      ? "page " + (page + 1) + " of " + pages + " · " + matches.length + " instance" + (matches.length === 1 ? "" : "s")
      : "0 instances") + loading;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }

  /* -- the model picker: chips of the picked models, a search over all of them ------------------- */

  function label(model) {
    return model.display_name + (model.score === null ? "" : " (" + (100 * model.score).toFixed(1) + ")") +
      (model.partial ? " partial" : "");
  }

  function renderPicker() {
    while (pickedBox.firstChild) pickedBox.removeChild(pickedBox.firstChild);
    picked.forEach(function (name) {
      var chip = el("button", "chip", label(modelsByName[name]) + (loadedModels[name] ? "" : " …") + " ×");
      chip.type = "button";
      chip.title = "remove from the instances";
      chip.setAttribute("data-model", name);
      chip.addEventListener("click", function () {
        picked = picked.filter(function (other) { return other !== name; });
        renderPicker();
        recompute(true);
      });
      pickedBox.appendChild(chip);
    });
    if (!picked.length) pickedBox.appendChild(el("span", "muted", "none"));
    renderOptions();
  }

  function renderOptions() {
    while (modelOptions.firstChild) modelOptions.removeChild(modelOptions.firstChild);
    var needle = modelSearch.value.trim().toLowerCase();
    if (!needle) return;
    var found = meta.models.filter(function (model) {
      return picked.indexOf(model.name) === -1 &&
        (model.display_name.toLowerCase().indexOf(needle) !== -1 || model.name.toLowerCase().indexOf(needle) !== -1);
    });
    found.slice(0, 12).forEach(function (model) {
      var item = el("li");
      var button = el("button", "option", label(model));
      button.type = "button";
      button.setAttribute("data-model", model.name);
      button.addEventListener("click", function () { pick(model.name); });
      item.appendChild(button);
      modelOptions.appendChild(item);
    });
    if (found.length > 12) modelOptions.appendChild(el("li", "muted", (found.length - 12) + " more: type more of the name"));
    if (!found.length) modelOptions.appendChild(el("li", "muted", "no other model matches"));
  }

  function pick(name) {
    if (picked.indexOf(name) !== -1) return;
    picked.push(name);
    modelSearch.value = "";
    renderPicker();
    loadModel(name, function () { renderPicker(); recompute(true); });
  }

  /* -- start: the first piece and the picked models, then the first screen, then the rest ---------- */

  function loadRest() {
    if (piecesLoaded >= meta.instance_files.length) return;
    loadNextPiece(function () { recompute(true); loadRest(); });
  }

  function start() {
    var waiting = 1 + picked.length;
    function arrived() {
      waiting -= 1;
      if (waiting > 0) return;
      started = true;
      renderPicker();
      recompute(false);
      loadRest();
    }
    if (meta.instance_files.length) loadNextPiece(arrived); else arrived();
    picked.forEach(function (name) { loadModel(name, arrived); });
  }

  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { if (started) recompute(false); }, 120);
  });
  modelSearch.addEventListener("input", renderOptions);
  filter.addEventListener("change", function () { if (started) recompute(false); });
  if (subject) subject.addEventListener("change", function () { if (started) recompute(false); });
  prev.addEventListener("click", function () { page -= 1; render(); list.scrollIntoView({ block: "start" }); });
  next.addEventListener("click", function () { page += 1; render(); list.scrollIntoView({ block: "start" }); });
  renderPicker();
  start();
})();
