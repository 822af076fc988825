/* report.html behaviour: the matrix (drawn as it scrolls), cell tooltips and details panel, matrix and op filters,
   sortable tables, #cell= links.
   Reads the JSON in #report-data; its field names come with it (D.keys: name -> key, made by
   conformance/report/html/data.py), so this script never spells a key of its own. A cell's details (diagnostics,
   rerun command, timings...) are inflated from the page's #details-N blocks when the panel opens. Data only ever
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

  // A cell (i: matrix row, j: backend): its record in the blob, how it looks (CSS classes, text), its classes as a set.
  function cell(i, j) { return D.records[D.cells[i * NB + j]]; }
  var LOOK_CLASSES = D.looks.map(function (look) {
    var set = {};
    look[0].split(" ").forEach(function (c) { set[c] = true; });
    return set;
  });
  function classesOf(i, j) { return LOOK_CLASSES[get(cell(i, j), "look")]; }
  function statusOf(i, j) {
    var cl = classesOf(i, j);
    for (var k = 0; k < STATUS.length; k++) if (cl[STATUS[k][0]]) return STATUS[k][1];
    return "?";
  }
  function seconds(t) { return t < 10 ? t.toFixed(2) : t.toFixed(1); }
  var byCase = {}, familySize = {};
  D.rows.forEach(function (r, i) {
    byCase[get(r, "case")] = i;
    familySize[get(r, "family")] = (familySize[get(r, "family")] || 0) + 1;
  });

  // Details on demand: chunk c holds cells c * D.chunk_cells onwards, as base64 of zlib-compressed JSON
  // (cell index -> fields), inflated once, when a cell of it is first opened.
  var chunks = {};
  function inflate(base64) {
    var raw = atob(base64), bytes = new Uint8Array(raw.length);
    for (var k = 0; k < raw.length; k++) bytes[k] = raw.charCodeAt(k);
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"))).text();
  }
  function detailsOf(i, j) {
    var at = i * NB + j, c = Math.floor(at / D.chunk_cells);
    if (!chunks[c]) {
      var block = $("details-" + c);
      if (!block) chunks[c] = Promise.resolve({});
      else if (typeof DecompressionStream === "undefined") chunks[c] = Promise.reject(new Error("this browser has no DecompressionStream"));
      else chunks[c] = inflate(block.textContent).then(JSON.parse);
    }
    return chunks[c].then(function (all) { return all[at] || {}; });
  }

  // A file: link to a path on this machine (a bundle's reproduce.sh): the only links the script makes.
  function fileLink(path) {
    return path.charAt(0) === "/" ? "file://" + path.split("/").map(encodeURIComponent).join("/") : null;
  }

  // What the details panel and the tooltip show of a cell: [label, text, kind]; kind says how to show it.
  // d: the cell's details once inflated; null while they are, an Error when they cannot be.
  function facts(i, j, d) {
    var row = D.rows[i], c = cell(i, j);
    var out = [["backend", B[j]]];
    var outcome = statusOf(i, j);
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
    if (d === null) out.push(["details", "decoding\u2026"]);
    else if (d instanceof Error) out.push(["details", "not shown: " + d.message + " (results.jsonl has them)"]);
    else {
      if (has(d, "reproduce")) out.push(["reproduce", get(d, "reproduce"), "command"]);
      if (has(d, "bundle")) out.push(["bundle", get(d, "bundle"), "link"]);
      if (has(d, "localized")) out.push(["localized", get(d, "localized"), "pre"]);
      if (has(d, "localized_case")) out.push(["one-op case", get(d, "localized_case"), "link"]);
      if (has(d, "details")) out.push(["diagnostics", get(d, "details"), "diagnostics"]);
      if (has(d, "timings")) {
        var total = 0, parts = [];
        get(d, "timings").forEach(function (secs, k) { if (secs) { total += secs; parts.push(STAGES[k] + " " + seconds(secs)); } });
        out.push(["time", seconds(total) + " s (" + parts.join(", ") + ")"]);
      }
      if (has(d, "exported_ops")) out.push(["exported ops", get(d, "exported_ops").join(", ")]);
    }
    out.push(["family", D.families[get(row, "family")]]);
    if (has(row, "kind")) out.push(["kind", text(row, "kind")]);
    if (has(row, "ops")) out.push(["case ops", texts(row, "ops").join(", ")]);
    if (has(row, "tags")) out.push(["tags", texts(row, "tags").join(", ")]);
    return out;
  }

  // The matrix: only the rows in view (and some either side) are elements; gaps above and below keep the
  // scroll height. `order` is what the filters let through, top to bottom: a case row as its index i, a family
  // head as -1 - f; `tops` their y within the body. Heights in px, as report.css draws them (.mx rows).
  var ROW_H = 19, HEAD_H = 22, BLAMED_H = 16, MARGIN = 40;
  var table = $("matrix-table"), box = table && table.parentNode, tbody = table && table.tBodies[0];
  var order = [], tops = [0], drawn = [0, 0], printing = false, selected = null;
  function heightOf(e) { return e < 0 ? HEAD_H : ROW_H + BLAMED_H * (get(D.rows[e], "blamed") || []).length; }
  function entryAt(y) {  // the last entry starting at or above y
    var lo = 0, hi = order.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (tops[mid] <= y) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function gap(h) {
    var tr = document.createElement("tr"), td = document.createElement("td");
    tr.className = "gap";
    tr.style.height = h + "px";
    td.colSpan = NB + 1;
    tr.appendChild(td);
    return tr;
  }
  function familyHead(f) {
    var tr = document.createElement("tr"), th = document.createElement("th"), n = document.createElement("span");
    tr.className = "fh";
    tr.dataset.f = f;
    tr.style.height = HEAD_H + "px";
    th.colSpan = NB + 1;
    th.textContent = D.families[f] + " ";
    n.textContent = familySize[f].toLocaleString("en-US");
    th.appendChild(n);
    tr.appendChild(th);
    return tr;
  }
  function caseRow(i) {
    var row = D.rows[i], tr = document.createElement("tr"), th = document.createElement("th"), id = document.createElement("span");
    tr.dataset.i = i;
    tr.dataset.f = get(row, "family");
    tr.style.height = heightOf(i) + "px";
    id.className = "cid";
    id.textContent = get(row, "case");
    th.appendChild(id);
    (get(row, "blamed") || []).forEach(function (b) {  // a model's op --localize blamed, per backend
      var loc = document.createElement("span"), where = document.createElement("span");
      loc.className = "loc cid";
      loc.title = b[2];
      loc.textContent = "\u2192 " + b[0] + " ";
      where.className = "muted";
      where.textContent = "[" + B[b[1]] + "]";
      loc.appendChild(where);
      th.appendChild(loc);
    });
    tr.appendChild(th);
    for (var j = 0; j < NB; j++) {
      var td = document.createElement("td"), look = D.looks[get(cell(i, j), "look")];
      td.className = look[0];
      td.textContent = look[1];
      if (selected && selected[0] === i && selected[1] === j) td.classList.add("sel");
      tr.appendChild(td);
    }
    return tr;
  }
  function draw(force) {
    if (!table) return;
    var from = 0, to = order.length;
    if (!printing && order.length) {
      var top = box.scrollTop - table.tHead.offsetHeight, bottom = top + Math.max(box.clientHeight, window.innerHeight);
      var first = entryAt(top), last = entryAt(bottom) + 1;
      if (!force && first >= drawn[0] && last <= drawn[1]) return;
      from = Math.max(0, first - MARGIN);
      to = Math.min(order.length, last + MARGIN);
    }
    var frag = document.createDocumentFragment();
    if (tops[from]) frag.appendChild(gap(tops[from]));
    for (var k = from; k < to; k++) frag.appendChild(order[k] < 0 ? familyHead(-1 - order[k]) : caseRow(order[k]));
    if (tops[order.length] - tops[to]) frag.appendChild(gap(tops[order.length] - tops[to]));
    tbody.textContent = "";
    tbody.appendChild(frag);
    drawn = [from, to];
  }
  function cellElement(i, j) {
    var tr = tbody && tbody.querySelector('tr[data-i="' + i + '"]');
    return tr ? tr.cells[j + 1] : null;
  }
  function position(td) {
    var tr = td.parentNode;
    if (!tr || tr.dataset.i === undefined || td.cellIndex < 1) return null;
    return [+tr.dataset.i, td.cellIndex - 1];
  }
  if (table) {
    var scheduled = false;
    var redraw = function () {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(function () { scheduled = false; draw(false); });
    };
    box.addEventListener("scroll", redraw, { passive: true });
    window.addEventListener("resize", redraw);
    window.addEventListener("beforeprint", function () { printing = true; draw(true); });
    window.addEventListener("afterprint", function () { printing = false; draw(true); });
  }

  // Tooltips: set on first hover, so no cell carries one before it is pointed at.
  var TOOLTIP = { outcome: 1, code: 1, stage: 1, op: 1, explanation: 1, "since baseline": 1, history: 1 };
  if (table) {
    tbody.addEventListener("mouseover", function (ev) {
      var td = ev.target.closest("td");
      if (!td || td.title) return;
      var pos = position(td);
      if (!pos) return;
      var lines = [get(D.rows[pos[0]], "case") + " \u00b7 " + B[pos[1]]];
      facts(pos[0], pos[1], {}).slice(1).forEach(function (f) {
        if (TOOLTIP[f[0]]) {
          var v = f[1].length > 700 ? f[1].slice(0, 699) + "\u2026" : f[1];
          lines.push(f[0] === "explanation" ? v : f[0] + ": " + v);
        }
      });
      td.title = lines.join("\n");
    });
    tbody.addEventListener("click", function (ev) {
      var td = ev.target.closest("td");
      var pos = td && position(td);
      if (pos) open(pos[0], pos[1], false);
    });
  }

  // The details panel.
  var panel = $("panel");
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
  function fill(i, j, d) {
    var body = $("panel-body");
    while (body.firstChild) body.removeChild(body.firstChild);
    facts(i, j, d).forEach(function (f) {
      var dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = f[0];
      dd.dataset.fact = f[0];
      show(dd, f);
      body.appendChild(dt);
      body.appendChild(dd);
    });
    panel.dataset.loaded = d === null ? "" : "1";  // "1": the details are in (tests wait for it)
  }
  function open(i, j, scroll) {
    if (!panel) return;
    var old = selected && cellElement(selected[0], selected[1]);
    if (old) old.classList.remove("sel");
    selected = [i, j];
    $("panel-title").textContent = get(D.rows[i], "case");
    fill(i, j, null);
    var inflated = function (d) { if (selected && selected[0] === i && selected[1] === j) fill(i, j, d); };
    detailsOf(i, j).then(inflated, inflated);  // an Error shows as such
    panel.hidden = false;
    panel.dataset.case = get(D.rows[i], "case");
    panel.dataset.backend = B[j];
    var hash = "#cell=" + encodeURIComponent(get(D.rows[i], "case")) + "|" + encodeURIComponent(B[j]);
    if (location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (e) { /* file: URLs in some browsers */ }
    }
    if (scroll && table) {
      var k = order.indexOf(i);
      if (k < 0) { reset(); k = order.indexOf(i); }
      box.scrollTop = Math.max(0, tops[k] + table.tHead.offsetHeight - box.clientHeight / 2);
      draw(true);
    }
    var td = cellElement(i, j);
    if (td) {
      td.classList.add("sel");
      if (scroll) td.scrollIntoView({ block: "center", inline: "nearest" });
    }
  }
  function close() {
    if (!panel) return;
    panel.hidden = true;
    var td = selected && cellElement(selected[0], selected[1]);
    if (td) td.classList.remove("sel");
    selected = null;
  }
  if ($("panel-close")) $("panel-close").addEventListener("click", close);
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") close(); });

  // Matrix filters: they choose the rows of `order`, from the data (no element per row to look at).
  var fText = $("f-text"), fFam = $("f-family"), fBack = $("f-backend"), fOut = $("f-outcome"), fCount = $("f-count");
  var columnStyle = document.createElement("style");
  document.head.appendChild(columnStyle);
  var rowTexts = null;
  function rowText(i) {
    if (!rowTexts) {
      rowTexts = D.rows.map(function (row, r) {
        var bits = [get(row, "case"), text(row, "kind"), D.families[get(row, "family")]].concat(texts(row, "ops"), texts(row, "tags"));
        for (var j = 0; j < NB; j++) {
          var c = cell(r, j);
          bits.push(text(c, "code"), text(c, "op"), text(c, "stage"), text(c, "explanation"), text(c, "verdict"));
        }
        return bits.join("\n").toLowerCase();
      });
    }
    return rowTexts[i];
  }
  function cellMatches(cl, o) {
    if (o === "u") return cl.vf || cl.vc || cl.vp;
    if (o === "n") return cl.nf || cl.np || cl.nc;
    return cl[o];
  }
  function outcomeMatches(i, b, o) {
    if (!o) return true;
    var j;
    if (o === "d") {
      var sawPass = false, sawFail = false;
      for (j = 0; j < NB; j++) {
        sawPass = sawPass || !!classesOf(i, j).p;
        sawFail = sawFail || !!classesOf(i, j).f;
      }
      return sawPass && sawFail;
    }
    var from = b === "" ? 0 : +b, to = b === "" ? NB : +b + 1;
    for (j = from; j < to; j++) if (cellMatches(classesOf(i, j), o)) return true;
    return false;
  }
  function apply() {
    if (!table) return;
    var words = fText.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var fam = fFam.value, b = fBack.value, o = fOut.value, shown = 0, lastFamily = null;
    order = [];
    for (var i = 0; i < D.rows.length; i++) {
      var f = get(D.rows[i], "family"), ok = (!fam || String(f) === fam) && outcomeMatches(i, b, o);
      if (ok && words.length) {
        var t = rowText(i);
        for (var w = 0; w < words.length && ok; w++) ok = t.indexOf(words[w]) >= 0;
      }
      if (!ok) continue;
      if (f !== lastFamily) order.push(-1 - f);  // rows come family by family: a head before each family's first
      lastFamily = f;
      order.push(i);
      shown++;
    }
    tops = [0];
    for (var k = 0; k < order.length; k++) tops.push(tops[k] + heightOf(order[k]));
    var rules = [];
    if (b !== "") {
      for (var j = 0; j < NB; j++) {
        if (String(j) !== b) rules.push("#matrix-table td:nth-child(" + (j + 2) + "),#matrix-table thead th:nth-child(" + (j + 2) + ")");
      }
    }
    columnStyle.textContent = rules.length ? rules.join(",") + "{display:none}" : "";
    fCount.textContent = shown === D.rows.length ? D.rows.length + " cases" : shown + " of " + D.rows.length + " cases";
    box.scrollTop = 0;
    draw(true);
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
    $("op-count").textContent = shown + " of " + trs.length + " rows (op, dtypes)";
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
