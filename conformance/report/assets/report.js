/* report.html behaviour: cell tooltips and details panel, matrix and op filters, sortable tables, #cell= links.
   Reads the JSON in #report-data; its field names come with it (D.keys: name -> key, made by
   conformance/report/html/data.py), so this script never spells a key of its own. Data only ever
   reaches the page through textContent, the title property and file: links: never through innerHTML.
   Kept ASCII (the page is). */
(function () {
  "use strict";
  var dataEl = document.getElementById("report-data");
  if (!dataEl) return;
  var D = JSON.parse(dataEl.textContent);
  var K = D.keys, S = D.strings, B = D.backends, NB = B.length, STAGES = D.stages, REPORTS = D.reports || [];
  var STATUS = [["p", "PASS"], ["f", "FAIL"], ["s", "SKIP"], ["y", "FLAKY (its runs disagree)"], ["cp", "COMPILED (not run: no device)"], ["na", "not run"]];
  var NEW = { 1: "newly failing (passed in the baseline)", 2: "newly passing", 3: "failing differently than in the baseline" };
  var NIGHT = { p: "pass", f: "fail", s: "skip", y: "flaky", c: "compiled, not run (no device)", ".": "not run" };
  function $(id) { return document.getElementById(id); }
  function str(i) { return i === undefined || i === null ? "" : S[i]; }
  // A field of a row or a cell by its name (a name data.py does not list is an error, not a silent blank).
  function get(record, name) {
    if (!Object.prototype.hasOwnProperty.call(K, name)) throw new Error("report.js: no field named " + name);
    return record[K[name]];
  }
  function has(record, name) { return get(record, name) !== undefined; }
  function text(record, name) { return str(get(record, name)); }
  function texts(record, name) { return (get(record, name) || []).map(str); }

  var table = $("matrix-table");
  var rows = [], heads = [], byCase = {};
  if (table) {
    var all = table.tBodies[0].rows;
    for (var k = 0; k < all.length; k++) {
      if (all[k].classList.contains("fh")) heads.push(all[k]); else rows.push(all[k]);
    }
  }
  D.rows.forEach(function (r, i) { byCase[get(r, "case")] = i; });

  function statusOf(td) {
    for (var k = 0; k < STATUS.length; k++) if (td.classList.contains(STATUS[k][0])) return STATUS[k][1];
    return "?";
  }
  function position(td) {
    var tr = td.parentNode;
    if (!tr || tr.dataset.i === undefined || td.cellIndex < 1) return null;
    return [+tr.dataset.i, td.cellIndex - 1];
  }
  function seconds(t) { return t < 10 ? t.toFixed(2) : t.toFixed(1); }

  // A file: link to a path on this machine (a bundle's reproduce.sh): the only links the script makes.
  function fileLink(path) {
    return path.charAt(0) === "/" ? "file://" + path.split("/").map(encodeURIComponent).join("/") : null;
  }

  // What the details panel and the tooltip show of a cell: [label, text, kind]; kind says how to show it.
  function facts(i, j) {
    var row = D.rows[i], c = D.cells[i * NB + j] || {}, td = rows[i].cells[j + 1];
    var out = [["backend", B[j]]];
    var outcome = statusOf(td);
    if (has(c, "verdict")) outcome += " \u00b7 xfail verdict " + text(c, "verdict");
    out.push(["outcome", outcome]);
    if (has(c, "code")) out.push(["code", text(c, "code")]);
    if (has(c, "stage")) out.push(["stage", text(c, "stage")]);
    if (has(c, "op")) out.push(["op", text(c, "op")]);
    if (has(c, "explanation")) out.push(["explanation", text(c, "explanation"), "pre"]);
    if (has(c, "change")) out.push(["since baseline", NEW[get(c, "change")] + (has(c, "was") ? " (was " + text(c, "was") + ")" : "")]);
    if (has(c, "history")) {
      var since = get(c, "failing_since"), flips = get(c, "flips") || 0, n = text(c, "history").length;
      var said = flips + " flip" + (flips === 1 ? "" : "s") + " in " + n + " report" + (n === 1 ? "" : "s");
      if (since !== undefined) said = (since === 0 && n > 1 ? "failing at least since " : "failing since ") + REPORTS[since] + "; " + said;
      if (n < 2) said = "no earlier report in this output directory";
      out.push(["history", said, "history", text(c, "history")]);
    }
    if (has(c, "reproduce")) out.push(["reproduce", text(c, "reproduce"), "command"]);
    if (has(c, "bundle")) out.push(["bundle", text(c, "bundle"), "link"]);
    if (has(c, "localized")) out.push(["localized", text(c, "localized"), "pre"]);
    if (has(c, "localized_case")) out.push(["one-op case", text(c, "localized_case"), "link"]);
    if (has(c, "details")) out.push(["diagnostics", text(c, "details"), "diagnostics"]);
    if (has(c, "timings")) {
      var total = 0, parts = [];
      get(c, "timings").forEach(function (secs, k) { if (secs) { total += secs; parts.push(STAGES[k] + " " + seconds(secs)); } });
      out.push(["time", seconds(total) + " s (" + parts.join(", ") + ")"]);
    }
    if (has(c, "exported_ops")) out.push(["exported ops", texts(c, "exported_ops").join(", ")]);
    out.push(["family", D.families[+rows[i].dataset.f]]);
    if (has(row, "kind")) out.push(["kind", text(row, "kind")]);
    if (has(row, "ops")) out.push(["case ops", texts(row, "ops").join(", ")]);
    if (has(row, "tags")) out.push(["tags", texts(row, "tags").join(", ")]);
    return out;
  }

  // Tooltips: set on first hover, so the page does not carry one title per cell.
  var TOOLTIP = { outcome: 1, code: 1, stage: 1, op: 1, explanation: 1, "since baseline": 1, history: 1 };
  if (table) {
    table.tBodies[0].addEventListener("mouseover", function (ev) {
      var td = ev.target.closest("td");
      if (!td || td.title) return;
      var pos = position(td);
      if (!pos) return;
      var lines = [get(D.rows[pos[0]], "case") + " \u00b7 " + B[pos[1]]];
      facts(pos[0], pos[1]).slice(1).forEach(function (f) {
        if (TOOLTIP[f[0]]) {
          var v = f[1].length > 700 ? f[1].slice(0, 699) + "\u2026" : f[1];
          lines.push(f[0] === "explanation" ? v : f[0] + ": " + v);
        }
      });
      td.title = lines.join("\n");
    });
    table.tBodies[0].addEventListener("click", function (ev) {
      var td = ev.target.closest("td");
      var pos = td && position(td);
      if (pos) open(pos[0], pos[1], false);
    });
  }

  // The details panel.
  var panel = $("panel"), selected = null;
  function show(dd, f) {
    var kind = f[2];
    if (kind === "history") {
      var strip = document.createElement("span");
      strip.className = "hist";
      f[3].split("").forEach(function (ch, k) {
        var mark = document.createElement("i");
        mark.className = "h" + (ch === "." ? "a" : ch);
        mark.title = REPORTS[k] + ": " + (NIGHT[ch] || ch);
        strip.appendChild(mark);
      });
      dd.appendChild(strip);
      dd.appendChild(document.createTextNode(" " + f[1]));
      return;
    }
    if (kind === "link") {
      var href = fileLink(f[1]);
      var code = document.createElement("code");
      code.textContent = "sh " + f[1];
      dd.appendChild(code);
      if (href) {
        var a = document.createElement("a");
        a.href = href;
        a.textContent = "open";
        dd.appendChild(document.createTextNode(" "));
        dd.appendChild(a);
      }
      return;
    }
    dd.textContent = f[1];
    if (kind) dd.className = kind === "pre" ? "pre" : "pre " + kind;
  }
  function open(i, j, scroll) {
    if (!panel) return;
    var td = rows[i].cells[j + 1];
    if (selected) selected.classList.remove("sel");
    selected = td;
    td.classList.add("sel");
    $("panel-title").textContent = get(D.rows[i], "case");
    var body = $("panel-body");
    while (body.firstChild) body.removeChild(body.firstChild);
    facts(i, j).forEach(function (f) {
      var dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = f[0];
      dd.dataset.fact = f[0];
      show(dd, f);
      body.appendChild(dt);
      body.appendChild(dd);
    });
    panel.hidden = false;
    panel.dataset.case = get(D.rows[i], "case");
    panel.dataset.backend = B[j];
    var hash = "#cell=" + encodeURIComponent(get(D.rows[i], "case")) + "|" + encodeURIComponent(B[j]);
    if (location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (e) { /* file: URLs in some browsers */ }
    }
    if (scroll) {
      if (rows[i].hidden) { reset(); }
      td.scrollIntoView({ block: "center", inline: "nearest" });
    }
  }
  function close() {
    if (!panel) return;
    panel.hidden = true;
    if (selected) selected.classList.remove("sel");
    selected = null;
  }
  if ($("panel-close")) $("panel-close").addEventListener("click", close);
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") close(); });

  // Matrix filters.
  var fText = $("f-text"), fFam = $("f-family"), fBack = $("f-backend"), fOut = $("f-outcome"), fCount = $("f-count");
  var columnStyle = document.createElement("style");
  document.head.appendChild(columnStyle);
  var rowTexts = null;
  function rowText(i) {
    if (!rowTexts) {
      rowTexts = D.rows.map(function (row, r) {
        var bits = [get(row, "case"), text(row, "kind"), D.families[+rows[r].dataset.f]].concat(texts(row, "ops"), texts(row, "tags"));
        for (var j = 0; j < NB; j++) {
          var c = D.cells[r * NB + j];
          if (c) bits.push(text(c, "code"), text(c, "op"), text(c, "stage"), text(c, "explanation"), text(c, "verdict"));
        }
        return bits.join("\n").toLowerCase();
      });
    }
    return rowTexts[i];
  }
  function cellMatches(td, o) {
    var cl = td.classList;
    if (o === "u") return cl.contains("vf") || cl.contains("vc") || cl.contains("vp");
    if (o === "n") return cl.contains("nf") || cl.contains("np") || cl.contains("nc");
    return cl.contains(o);
  }
  function outcomeMatches(tr, b, o) {
    if (!o) return true;
    var j;
    if (o === "d") {
      var sawPass = false, sawFail = false;
      for (j = 1; j <= NB; j++) {
        sawPass = sawPass || tr.cells[j].classList.contains("p");
        sawFail = sawFail || tr.cells[j].classList.contains("f");
      }
      return sawPass && sawFail;
    }
    var from = b === "" ? 0 : +b, to = b === "" ? NB : +b + 1;
    for (j = from; j < to; j++) if (cellMatches(tr.cells[j + 1], o)) return true;
    return false;
  }
  function apply() {
    if (!table) return;
    var words = fText.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var fam = fFam.value, b = fBack.value, o = fOut.value, shown = 0, families = {};
    for (var i = 0; i < rows.length; i++) {
      var tr = rows[i], ok = (!fam || tr.dataset.f === fam) && outcomeMatches(tr, b, o);
      if (ok && words.length) {
        var text = rowText(i);
        for (var w = 0; w < words.length && ok; w++) ok = text.indexOf(words[w]) >= 0;
      }
      tr.hidden = !ok;
      if (ok) { shown++; families[tr.dataset.f] = true; }
    }
    heads.forEach(function (h) { h.hidden = !families[h.dataset.f]; });
    var rules = [];
    if (b !== "") {
      for (var j = 0; j < NB; j++) {
        if (String(j) !== b) rules.push("#matrix-table td:nth-child(" + (j + 2) + "),#matrix-table thead th:nth-child(" + (j + 2) + ")");
      }
    }
    columnStyle.textContent = rules.length ? rules.join(",") + "{display:none}" : "";
    fCount.textContent = shown === rows.length ? rows.length + " cases" : shown + " of " + rows.length + " cases";
  }
  function reset() {
    fText.value = ""; fFam.value = ""; fBack.value = ""; fOut.value = "";
    apply();
  }
  var timer = null;
  if (table) {
    fText.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 120); });
    [fFam, fBack, fOut].forEach(function (el) { el.addEventListener("change", apply); });
    $("f-reset").addEventListener("click", reset);
    apply();
  }

  // Op coverage filter.
  var opText = $("op-text"), opPartial = $("op-partial"), opTable = $("op-table");
  function applyOps() {
    var q = opText.value.trim().toLowerCase(), only = opPartial.checked, shown = 0, trs = opTable.tBodies[0].rows;
    for (var i = 0; i < trs.length; i++) {
      var ok = (!only || trs[i].classList.contains("partial")) && (!q || trs[i].cells[0].textContent.toLowerCase().indexOf(q) >= 0);
      trs[i].hidden = !ok;
      if (ok) shown++;
    }
    $("op-count").textContent = shown + " of " + trs.length + " ops";
  }
  if (opTable && opText) {
    opText.addEventListener("input", applyOps);
    opPartial.addEventListener("change", applyOps);
    applyOps();
  }

  // Sortable tables: a click on a column's header sorts by it (numbers by data-sort), a second click reverses.
  function sortKey(td) {
    var v = td.dataset.sort !== undefined ? td.dataset.sort : td.textContent;
    var n = Number(v.replace(/,/g, ""));
    return v.trim() !== "" && !isNaN(n) ? n : v.toLowerCase();
  }
  function sortBy(th) {
    var tbl = th.closest("table"), col = th.cellIndex, body = tbl.tBodies[0];
    var up = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", up ? "ascending" : "descending");
    var trs = Array.prototype.slice.call(body.rows).map(function (tr, k) { return [sortKey(tr.cells[col]), k, tr]; });
    trs.sort(function (a, b) {
      var x = a[0], y = b[0], d = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return (up ? d : -d) || a[1] - b[1];
    });
    trs.forEach(function (t) { body.appendChild(t[2]); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable thead th"), function (th) {
    th.tabIndex = 0;
    th.addEventListener("click", function () { sortBy(th); });
    th.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortBy(th); } });
  });

  // Links: #cell=<case>|<backend> opens that cell; #q=, #family=, #backend=, #outcome= set the filters.
  function fromHash() {
    var params = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var at = kv.indexOf("=");
      if (at > 0) params[kv.slice(0, at)] = kv.slice(at + 1);
    });
    try {
      if (table && (params.q !== undefined || params.family !== undefined || params.backend !== undefined || params.outcome !== undefined)) {
        fText.value = params.q !== undefined ? decodeURIComponent(params.q) : "";
        fFam.value = ""; fBack.value = ""; fOut.value = params.outcome !== undefined ? decodeURIComponent(params.outcome) : "";
        if (params.family !== undefined) fFam.value = String(D.families.indexOf(decodeURIComponent(params.family)));
        if (params.backend !== undefined) fBack.value = String(B.indexOf(decodeURIComponent(params.backend)));
        if (fFam.selectedIndex < 0) fFam.value = "";
        if (fBack.selectedIndex < 0) fBack.value = "";
        if (fOut.selectedIndex < 0) fOut.value = "";
        apply();
      }
      if (params.cell !== undefined) {
        var parts = params.cell.split("|");
        var i = byCase[decodeURIComponent(parts[0])], j = B.indexOf(decodeURIComponent(parts[1] || ""));
        if (i !== undefined && j >= 0) open(i, j, true);
      }
    } catch (e) { /* a malformed link: ignore it */ }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.documentElement.dataset.ready = "1";
})();
