/* report.html behaviour: cell tooltips and details panel, matrix and op filters, #cell= links.
   Reads the JSON in #report-data. Data only ever reaches the page through textContent
   and the title property: never through innerHTML. Kept ASCII (the page is). */
(function () {
  "use strict";
  var dataEl = document.getElementById("report-data");
  if (!dataEl) return;
  var D = JSON.parse(dataEl.textContent);
  var S = D.strings, B = D.backends, NB = B.length, STAGES = D.stages;
  var STATUS = [["p", "PASS"], ["f", "FAIL"], ["s", "SKIP"], ["na", "not run"]];
  var NEW = { 1: "newly failing (passed in the baseline)", 2: "newly passing", 3: "failing differently than in the baseline" };
  function $(id) { return document.getElementById(id); }
  function str(i) { return i === undefined || i === null ? "" : S[i]; }

  var table = $("matrix-table");
  var rows = [], heads = [], byCase = {};
  if (table) {
    var all = table.tBodies[0].rows;
    for (var k = 0; k < all.length; k++) {
      if (all[k].classList.contains("fh")) heads.push(all[k]); else rows.push(all[k]);
    }
  }
  D.rows.forEach(function (r, i) { byCase[r[0]] = i; });

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

  function facts(i, j) {
    var row = D.rows[i], c = D.cells[i * NB + j] || {}, td = rows[i].cells[j + 1];
    var out = [["backend", B[j]]];
    var outcome = statusOf(td);
    if (c.v !== undefined) outcome += " \u00b7 xfail verdict " + str(c.v);
    out.push(["outcome", outcome]);
    if (c.c !== undefined) out.push(["code", str(c.c)]);
    if (c.g !== undefined) out.push(["stage", str(c.g)]);
    if (c.o !== undefined) out.push(["op", str(c.o)]);
    if (c.e !== undefined) out.push(["explanation", str(c.e), true]);
    if (c.n) out.push(["since baseline", NEW[c.n] + (c.w !== undefined ? " (was " + str(c.w) + ")" : "")]);
    if (c.t) {
      var total = 0, parts = [];
      c.t.forEach(function (secs, k) { if (secs) { total += secs; parts.push(STAGES[k] + " " + seconds(secs)); } });
      out.push(["time", seconds(total) + " s (" + parts.join(", ") + ")"]);
    }
    if (c.a !== undefined) out.push(["reproducer", str(c.a), true]);
    if (c.x) out.push(["exported ops", c.x.map(str).join(", ")]);
    out.push(["family", D.families[+rows[i].dataset.f]]);
    if (row[1] !== null) out.push(["kind", str(row[1])]);
    if (row[2].length) out.push(["case ops", row[2].map(str).join(", ")]);
    if (row[3].length) out.push(["tags", row[3].map(str).join(", ")]);
    return out;
  }

  // Tooltips: set on first hover, so the page does not carry one title per cell.
  if (table) {
    table.tBodies[0].addEventListener("mouseover", function (ev) {
      var td = ev.target.closest("td");
      if (!td || td.title) return;
      var pos = position(td);
      if (!pos) return;
      var lines = [D.rows[pos[0]][0] + " \u00b7 " + B[pos[1]]];
      facts(pos[0], pos[1]).slice(1).forEach(function (f) {
        if (f[0] === "outcome" || f[0] === "code" || f[0] === "stage" || f[0] === "op" || f[0] === "explanation" || f[0] === "since baseline") {
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
  function open(i, j, scroll) {
    if (!panel) return;
    var td = rows[i].cells[j + 1];
    if (selected) selected.classList.remove("sel");
    selected = td;
    td.classList.add("sel");
    $("panel-title").textContent = D.rows[i][0];
    var body = $("panel-body");
    while (body.firstChild) body.removeChild(body.firstChild);
    facts(i, j).forEach(function (f) {
      var dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = f[0];
      dd.textContent = f[1];
      if (f[2]) dd.className = "pre";
      body.appendChild(dt);
      body.appendChild(dd);
    });
    panel.hidden = false;
    panel.dataset.case = D.rows[i][0];
    panel.dataset.backend = B[j];
    var hash = "#cell=" + encodeURIComponent(D.rows[i][0]) + "|" + encodeURIComponent(B[j]);
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
  var texts = null;
  function rowText(i) {
    if (!texts) {
      texts = D.rows.map(function (row, r) {
        var bits = [row[0], str(row[1]), D.families[+rows[r].dataset.f]].concat(row[2].map(str), row[3].map(str));
        for (var j = 0; j < NB; j++) {
          var c = D.cells[r * NB + j];
          if (c) bits.push(str(c.c), str(c.o), str(c.g), str(c.e), str(c.v));
        }
        return bits.join("\n").toLowerCase();
      });
    }
    return texts[i];
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
