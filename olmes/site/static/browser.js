/* olmes instance browser: pages through window.OLMES_TASK_DATA. Dataset text is untrusted, so every
   string reaches the page through textContent, never innerHTML. */
(function () {
  "use strict";
  var data = window.OLMES_TASK_DATA;
  var root = document.getElementById("browser");
  if (!data || !root) return;

  var pageSize = parseInt(root.getAttribute("data-page-size"), 10) || 10;
  var list = document.getElementById("browser-list");
  var search = document.getElementById("browser-search");
  var filter = document.getElementById("browser-filter");
  var prev = document.getElementById("browser-prev");
  var next = document.getElementById("browser-next");
  var status = document.getElementById("browser-status");
  var page = 0;
  var matches = [];

  function letter(position) { return String.fromCharCode(65 + position); }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  var haystacks = data.instances.map(function (item) {
    return [item.q, item.c.join("\n"), String(item.id), item.s || "", "#" + item.i].join("\n").toLowerCase();
  });

  var tieSets = {};
  data.models.forEach(function (model) {
    tieSets[model.name] = {};
    var ties = data.near_ties[model.name] || {};
    Object.keys(ties).forEach(function (method) {
      var set = {};
      ties[method].forEach(function (position) { set[position] = true; });
      tieSets[model.name][method] = set;
    });
  });

  function prediction(model, method, position) {
    var byMethod = data.predictions[model] || {};
    var values = byMethod[method];
    return values ? values[position] : -1;
  }

  /* The scoring that gives each model's OLMES score on this task (from its score summary). */
  var decisive = data.decisive || {};

  function keep(position) {
    var mode = filter.value;
    if (mode === "all") return true;
    var gold = data.instances[position].g;
    var models = data.models;
    if (mode === "ties") {
      return models.some(function (model) {
        return data.methods.some(function (method) {
          var set = tieSets[model.name][method];
          return set && set[position];
        });
      });
    }
    if (mode === "wrong") {
      return models.some(function (model) {
        var value = prediction(model.name, decisive[model.name], position);
        return value >= 0 && value !== gold;
      });
    }
    if (mode === "cfmcf") {
      return models.some(function (model) {
        var cf = prediction(model.name, data.recommended, position);
        var mcf = prediction(model.name, "mcf", position);
        return cf >= 0 && mcf >= 0 && cf !== mcf;
      });
    }
    if (mode === "disagree") {
      var seen = {};
      models.forEach(function (model) {
        data.methods.forEach(function (method) {
          var value = prediction(model.name, method, position);
          if (value >= 0) seen[value] = true;
        });
      });
      return Object.keys(seen).length > 1;
    }
    return true;
  }

  function recompute() {
    var needle = search.value.trim().toLowerCase();
    matches = [];
    for (var position = 0; position < data.instances.length; position += 1) {
      if (needle && haystacks[position].indexOf(needle) === -1) continue;
      if (!keep(position)) continue;
      matches.push(position);
    }
    page = 0;
    render();
  }

  function renderInstance(position) {
    var item = data.instances[position];
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

    if (data.models.length) {
      var wrap = el("div", "preds-wrap");
      var table = el("table", "preds");
      var thead = el("thead");
      var headRow = el("tr");
      headRow.appendChild(el("th", null, "Model"));
      data.methods.forEach(function (method) {
        headRow.appendChild(el("th", method === data.recommended ? "rec-col" : "", data.method_labels[method]));
      });
      thead.appendChild(headRow);
      table.appendChild(thead);
      var body = el("tbody");
      data.models.forEach(function (model) {
        var row = el("tr");
        row.appendChild(el("th", null, model.display_name));
        data.methods.forEach(function (method) {
          var value = prediction(model.name, method, position);
          var cell;
          if (value < 0) {
            cell = el("td", "none", "—");
            cell.title = "not scored";
          } else {
            var right = value === item.g;
            var tie = tieSets[model.name][method] && tieSets[model.name][method][position];
            cell = el("td", right ? "right" : "wrong", letter(value) + (right ? " ✓" : " ✗") + (tie ? " ≈" : ""));
            cell.title = (right ? "correct" : "wrong") + (tie ? "; near tie (top two within " + data.near_tie_nats + ")" : "");
          }
          row.appendChild(cell);
        });
        body.appendChild(row);
      });
      table.appendChild(body);
      wrap.appendChild(table);
      card.appendChild(wrap);
    }
    return card;
  }

  function render() {
    var pages = Math.max(1, Math.ceil(matches.length / pageSize));
    if (page >= pages) page = pages - 1;
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!matches.length) {
      list.appendChild(el("p", "empty", "No instance matches."));
    }
    matches.slice(page * pageSize, (page + 1) * pageSize).forEach(function (position) {
      list.appendChild(renderInstance(position));
    });
    status.textContent = matches.length
      ? "page " + (page + 1) + " of " + pages + " · " + matches.length + " instance" + (matches.length === 1 ? "" : "s")
      : "0 instances";
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }

  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(recompute, 120);
  });
  filter.addEventListener("change", recompute);
  prev.addEventListener("click", function () { page -= 1; render(); list.scrollIntoView({ block: "start" }); });
  next.addEventListener("click", function () { page += 1; render(); list.scrollIntoView({ block: "start" }); });
  recompute();
})();
