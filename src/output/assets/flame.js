/*
 * framewalk HTML views: the flame graph of one profile, and the differential
 * flame graph of two. Reads the profile(s) from the JSON block #fw-data
 * (written by src/output/html.c), builds the call tree for the chosen thread
 * and renders it with d3-flame-graph. Names from the profiled program are
 * only ever assigned as text (textContent, setAttribute, d3's .text()),
 * never parsed as HTML.
 *
 * Profile JSON (one per profile):
 *   strings  [s0, s1, ...]                 s0 is ""
 *   frames   [[name, file, line, kind(, full)]...] string ids; kind 0
 *                                          Python, 1 native, 2 kernel, 3 other;
 *                                          full: a long native name whose
 *                                          short form is name (the tooltip's)
 *   nodes    [parent0, frame0, parent1, frame1, ...]  node 0 is the root;
 *                                          a parent's id is below its child's
 *   threads  [[pid, tid, name], ...]
 *   counts   [thread0, node0, n0, thread1, node1, n1, ...]
 *   meta     {target, pid, python, backend, duration_s, rate_hz, samples,
 *             errors, source, calls_window_s (with calls: the seconds they cover)}
 *   calls    [name0, file0, entries0, resumes0, ...] (record --count-calls:
 *             exact counts per code object; absent without)
 */
(function () {
  "use strict";

  var KINDS = ["python", "native", "kernel", "other"];
  var KIND_LABEL = { python: "Python", native: "native", kernel: "kernel", other: "other",
                     thread: "thread", root: "all samples" };
  var HIGHLIGHT = "#e600e6";

  var raw = JSON.parse(document.getElementById("fw-data").textContent);
  var diffMode = raw.mode === "diff";
  var profiles = diffMode ? [decode(raw.before), decode(raw.after)] : [decode(raw.profile)];

  var el = {
    title: byId("fw-title"), summary: byId("fw-summary"), thread: byId("fw-thread"),
    threadLabel: byId("fw-thread-label"), width: byId("fw-width"), widthLabel: byId("fw-width-label"),
    search: byId("fw-search"), inverted: byId("fw-inverted"), lines: byId("fw-lines"),
    reset: byId("fw-reset"), legend: byId("fw-legend"), details: byId("fw-details"),
    chart: byId("fw-chart"), empty: byId("fw-empty"), tip: byId("fw-tip"),
    tableSection: byId("fw-table-section"), table: byId("fw-table")
  };

  var chart = null;
  var tree = null;
  var searchText = "";
  var maxAbsDelta = 0;

  function byId(id) { return document.getElementById(id); }

  function decode(p) {
    var nodes = p.nodes || [], counts = p.counts || [];
    var n = nodes.length / 2, parent = new Int32Array(n), frame = new Int32Array(n);
    for (var i = 0; i < n; i++) {
      parent[i] = nodes[2 * i];
      frame[i] = nodes[2 * i + 1];
    }
    var total = 0;
    for (var k = 2; k < counts.length; k += 3) total += counts[k];
    return { strings: p.strings || [""], frames: p.frames || [], parent: parent, frame: frame,
             threads: p.threads || [], counts: counts, meta: p.meta || {}, total: total,
             calls: p.calls || [] };
  }

  /* ---- formatting -------------------------------------------------- */

  function pct(part, whole) { return whole > 0 ? 100 * part / whole : 0; }
  function fmtPct(x) { return x.toFixed(2) + "%"; }
  function fmtPts(x) { return (x > 0 ? "+" : x < 0 ? "\u2212" : "\u00b1") + Math.abs(x).toFixed(2) + " pts"; }
  function fmtInt(x) { return Math.round(x).toLocaleString("en-US"); }

  function threadLabel(prof, t) {
    var th = prof.threads[t];
    return (prof.strings[th[2]] || "?") + " (" + th[1] + ")";
  }

  function location(node) {
    if (!node.file) return "";
    return node.line > 0 ? node.file + ":" + node.line : node.file;
  }

  /* ---- the call tree --------------------------------------------- */

  function newNode(name, file, line, kind) {
    return { name: name, file: file, line: line, kind: kind, children: [], map: new Map(),
             self: [0, 0], total: [0, 0], value: 0 };
  }

  function childOf(parent, key, make) {
    var c = parent.map.get(key);
    if (!c) {
      c = make();
      parent.map.set(key, c);
      parent.children.push(c);
    }
    return c;
  }

  /*
   * Add the counts of prof into column col of the tree under root. Profile
   * nodes are mapped to tree nodes once (memo per thread base), walking up
   * only to the nearest node already mapped.
   */
  function addProfile(root, prof, col, threadSel, perThread, splitLines) {
    var memos = new Map(), bases = new Map();
    var counts = prof.counts, parent = prof.parent, frame = prof.frame;
    var strings = prof.strings, frames = prof.frames;

    function base(t) {
      if (!perThread) return root;
      var b = bases.get(t);
      if (!b) {
        var th = prof.threads[t];
        b = childOf(root, "\u0001" + th[0] + ":" + th[1], function () {
          return newNode(threadLabel(prof, t), "", 0, "thread");
        });
        bases.set(t, b);
      }
      return b;
    }

    function resolve(n, b, memo) {
      var stack = [], m = n, cur;
      while (m !== 0 && memo[m] === undefined) {
        stack.push(m);
        m = parent[m];
      }
      cur = m === 0 ? b : memo[m];
      while (stack.length) {
        m = stack.pop();
        var fr = frames[frame[m]] || [0, 0, 0, 3];
        var name = strings[fr[0]] || "?", file = strings[fr[1]] || "";
        var kind = KINDS[fr[3]] || "other", line = splitLines ? fr[2] : 0;
        var full = fr.length > 4 ? strings[fr[4]] || "" : "";
        var key = kind + "\u0000" + (full || name) + "\u0000" + file + "\u0000" + line;
        cur = childOf(cur, key, function () {
          var made = newNode(name, file, line, kind);
          if (full) made.full = full;
          return made;
        });
        memo[m] = cur;
      }
      return cur;
    }

    for (var i = 0; i + 2 < counts.length; i += 3) {
      var t = counts[i], n = counts[i + 1], c = counts[i + 2];
      if (threadSel !== "all" && t !== threadSel) continue;
      var key = perThread ? t : 0;
      var memo = memos.get(key);
      if (!memo) {
        memo = new Array(parent.length);
        memos.set(key, memo);
      }
      resolve(n, base(t), memo).self[col] += c;
    }
  }

  /* Totals (post-order, iterative: stacks can be deep) and widths. */
  function finish(root, widthMode) {
    var order = [], stack = [root];
    while (stack.length) {
      var n = stack.pop();
      order.push(n);
      n.map = null;
      for (var i = 0; i < n.children.length; i++) stack.push(n.children[i]);
    }
    for (var j = order.length - 1; j >= 0; j--) {
      var node = order[j];
      node.total[0] += node.self[0];
      node.total[1] += node.self[1];
      if (node.parent_) {
        node.parent_.total[0] += node.total[0];
        node.parent_.total[1] += node.total[1];
      }
    }
    return order;
  }

  function linkParents(root) {
    var stack = [root];
    while (stack.length) {
      var n = stack.pop();
      for (var i = 0; i < n.children.length; i++) {
        n.children[i].parent_ = n;
        stack.push(n.children[i]);
      }
    }
  }

  function buildTree() {
    var splitLines = el.lines.checked;
    var root = newNode("all", "", 0, "root");
    if (!diffMode) {
      var sel = el.thread.value === "all" ? "all" : Number(el.thread.value);
      addProfile(root, profiles[0], 0, sel, sel === "all", splitLines);
    } else {
      addProfile(root, profiles[0], 0, "all", false, splitLines);
      addProfile(root, profiles[1], 1, "all", false, splitLines);
    }
    linkParents(root);
    var order = finish(root);
    if (!diffMode) {
      for (var i = 0; i < order.length; i++) order[i].value = order[i].total[0];
      root.name = "all (" + fmtInt(root.total[0]) + " samples)";
      return root;
    }
    /* Differential: shares of each profile's own total, in percent. */
    var bt = root.total[0], at = root.total[1], mode = el.width.value;
    maxAbsDelta = 0;
    for (var k = order.length - 1; k >= 0; k--) {
      var nd = order[k];
      nd.share = [pct(nd.total[0], bt), pct(nd.total[1], at)];
      nd.selfShare = [pct(nd.self[0], bt), pct(nd.self[1], at)];
      nd.delta = nd.share[1] - nd.share[0];
      nd.selfDelta = nd.selfShare[1] - nd.selfShare[0];
      if (nd !== root && Math.abs(nd.delta) > maxAbsDelta) maxAbsDelta = Math.abs(nd.delta);
      if (mode === "after") nd.value = nd.share[1];
      else if (mode === "before") nd.value = nd.share[0];
      else {
        var v = Math.max(nd.selfShare[0], nd.selfShare[1]);
        for (var c = 0; c < nd.children.length; c++) v += nd.children[c].value;
        nd.value = v;
      }
    }
    root.name = "all";
    return root;
  }

  /* ---- colours ------------------------------------------------------ */

  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return ((h >>> 0) % 1000) / 1000;
  }

  var PALETTE = {
    python: function (v) { return "hsl(" + (30 + 18 * v) + ",88%," + (57 + 10 * v) + "%)"; },
    native: function (v) { return "hsl(" + (172 + 22 * v) + ",48%," + (55 + 12 * v) + "%)"; },
    kernel: function (v) { return "hsl(" + (352 + 14 * v) + ",72%," + (62 + 8 * v) + "%)"; },
    other: function (v) { return "hsl(0,0%," + (72 + 8 * v) + "%)"; },
    thread: function (v) { return "hsl(220,18%," + (76 + 6 * v) + "%)"; },
    root: function () { return "hsl(220,10%,82%)"; }
  };

  function mix(a, b, t) {
    return "rgb(" + Math.round(a[0] + (b[0] - a[0]) * t) + "," + Math.round(a[1] + (b[1] - a[1]) * t) +
           "," + Math.round(a[2] + (b[2] - a[2]) * t) + ")";
  }

  function diffColor(node) {
    var scale = Math.max(maxAbsDelta, 0.5), t = Math.min(1, Math.abs(node.delta) / scale);
    t = Math.sqrt(t);
    if (Math.abs(node.delta) < 0.005) return "rgb(232,232,232)";
    return node.delta > 0 ? mix([232, 232, 232], [220, 40, 40], t) : mix([232, 232, 232], [40, 90, 220], t);
  }

  function colorOf(d) {
    if (d.highlight) return HIGHLIGHT;
    var node = d.data;
    if (diffMode) return diffColor(node);
    return (PALETTE[node.kind] || PALETTE.other)(hash(node.name));
  }

  function legendItem(color, text, cls) {
    var span = document.createElement("span");
    var sw = document.createElement("span");
    sw.className = cls || "fw-swatch";
    if (color) sw.style.background = color;
    span.appendChild(sw);
    span.appendChild(document.createTextNode(text));
    return span;
  }

  function drawLegend() {
    el.legend.textContent = "";
    if (diffMode) {
      el.legend.appendChild(document.createTextNode("shrunk"));
      el.legend.appendChild(legendItem(null, "grew", "fw-gradient"));
      var scale = document.createElement("span");
      scale.textContent = "(full colour: \u00b1" + Math.max(maxAbsDelta, 0.5).toFixed(1) + " pts of total)";
      el.legend.appendChild(scale);
    } else {
      var present = {};
      profiles[0].frames.forEach(function (f) { if (f) present[KINDS[f[3]] || "other"] = true; });
      ["python", "native", "kernel", "other"].forEach(function (k) {
        if (present[k] || k === "python")
          el.legend.appendChild(legendItem(PALETTE[k](0.4), KIND_LABEL[k]));
      });
    }
    el.legend.appendChild(legendItem(HIGHLIGHT, "search match"));
  }

  /* ---- tooltip and details ---------------------------------------- */

  /* exact counts [entries, resumes] by function (name, file) of profile k, or
     null (not a Python function, or no counts in that profile) */
  var callsByFn = [];
  function callsOf(node, k) {
    var p = profiles[k || 0];
    if (node.kind !== "python" || !p.calls.length) return null;
    if (!callsByFn[k || 0]) {
      var c = p.calls, s = p.strings, m = new Map();
      for (var i = 0; i + 3 < c.length; i += 4) {
        var key = (s[c[i]] || "") + "\u0000" + (s[c[i + 1]] || "");
        var had = m.get(key) || [0, 0];
        m.set(key, [had[0] + c[i + 2], had[1] + c[i + 3]]);
      }
      callsByFn[k || 0] = m;
    }
    return callsByFn[k || 0].get((node.full || node.name) + "\u0000" + node.file) || null;
  }

  /* diff: the exact call rates before and after (calls per second of each
     profile's counting window), when either profile has counts */
  function callRates(node) {
    var rates = [];
    for (var k = 0; k < 2; k++) {
      var c = callsOf(node, k) || [0, 0], secs = profiles[k].meta.calls_window_s;
      /* a function not entered in a counted profile ran 0 times there */
      rates.push(node.kind === "python" && profiles[k].calls.length && secs > 0 ?
                 (c[0] + c[1]) / secs : null);
    }
    return (rates[0] === null && rates[1] === null) || (!rates[0] && !rates[1]) ? null : rates;
  }
  function fmtRate(r) {
    return r === null ? "not counted" : fmtInt(Math.round(r)) + "/s";
  }

  function describe(node) {
    var rows = [];
    if (diffMode) {
      rows.push("total: " + fmtPct(node.share[0]) + " \u2192 " + fmtPct(node.share[1]) + "  (" + fmtPts(node.delta) + ")");
      rows.push("self:  " + fmtPct(node.selfShare[0]) + " \u2192 " + fmtPct(node.selfShare[1]) + "  (" + fmtPts(node.selfDelta) + ")");
      rows.push("samples before " + fmtInt(node.total[0]) + ", after " + fmtInt(node.total[1]));
      var rates = callRates(node);
      if (rates)
        rows.push("calls: " + fmtRate(rates[0]) + " \u2192 " + fmtRate(rates[1]) +
                  (rates[0] > 0 && rates[1] !== null ? "  (\u00d7" + (rates[1] / rates[0]).toFixed(2) + ")" : "") +
                  " (exact, all callers)");
    } else {
      var all = tree ? tree.total[0] : 0;
      rows.push("total: " + fmtInt(node.total[0]) + " samples (" + fmtPct(pct(node.total[0], all)) + ")");
      rows.push("self:  " + fmtInt(node.self[0]) + " samples (" + fmtPct(pct(node.self[0], all)) + ")");
      var calls = callsOf(node, 0);
      if (calls)
        rows.push("calls: " + fmtInt(calls[0]) + (calls[1] ? " + " + fmtInt(calls[1]) + " resumes" : "") +
                  " (exact, all callers)");
    }
    return rows;
  }

  function label(d) {
    var node = d.data, loc = location(node);
    return node.name + (loc ? " (" + loc + ")" : "") + "  \u2014  " + describe(node).slice(0, 2).join(";  ");
  }

  function makeTip() {
    function tip() {}
    tip.show = function (event, d) {
      var node = d.data, tipEl = el.tip;
      tipEl.textContent = "";
      var add = function (cls, text) {
        var div = document.createElement("div");
        div.className = cls;
        div.textContent = text;
        tipEl.appendChild(div);
      };
      add("fw-tip-name", node.full || node.name);
      if (node.file) add("fw-tip-file", location(node));
      add("fw-tip-row", "kind: " + (KIND_LABEL[node.kind] || node.kind));
      describe(node).forEach(function (r) { add("fw-tip-row", r); });
      tipEl.hidden = false;
      var w = tipEl.offsetWidth, h = tipEl.offsetHeight;
      var x = event.pageX + 12, y = event.pageY + 12;
      if (x + w > window.scrollX + window.innerWidth) x = Math.max(window.scrollX + 4, event.pageX - w - 12);
      if (y + h > window.scrollY + window.innerHeight) y = Math.max(window.scrollY + 4, event.pageY - h - 12);
      tipEl.style.left = x + "px";
      tipEl.style.top = y + "px";
      return tip;
    };
    tip.hide = function () {
      el.tip.hidden = true;
      return tip;
    };
    return tip;
  }

  function showDetails(text) {
    el.details.classList.toggle("fw-searching", !text && !!searchText);
    el.details.textContent = text || searchText || "\u00a0";
  }

  /* ---- the chart ------------------------------------------------------ */

  function matches(d, term) {
    if (!term) return false;
    var t = term.toLowerCase(), node = d.data;
    return node.kind !== "root" && (node.name.toLowerCase().indexOf(t) >= 0 ||
           (node.file && node.file.toLowerCase().indexOf(t) >= 0));
  }

  /*
   * Search over the whole hierarchy, iteratively (d3-flame-graph's own
   * search recurses and spreads every match into one call, which overflows
   * the stack on big profiles). A match inside another match adds no width.
   */
  function search(term) {
    var root = d3.select(el.chart).datum(), nodes = [root], under = [false];
    var count = 0, sum = 0;
    while (nodes.length) {
      var d = nodes.pop(), inside = under.pop(), hit = !!term && matches(d, term);
      d.highlight = hit;
      if (hit) {
        count++;
        if (!inside) sum += d.data.value;
      }
      if (d.children)
        for (var i = 0; i < d.children.length; i++) {
          nodes.push(d.children[i]);
          under.push(inside || hit);
        }
    }
    showSearch(term, count, sum, root.data.value);
    chart.update();
  }

  function showSearch(term, count, sum, total) {
    if (!term) {
      searchText = "";
    } else if (diffMode) {
      searchText = "search \u201c" + term + "\u201d: " + count + " frames, " +
        fmtPct(pct(sum, total)) + " of the width";
    } else {
      searchText = "search \u201c" + term + "\u201d: " + count + " frames, " + fmtInt(sum) +
        " of " + fmtInt(total) + " samples (" + fmtPct(pct(sum, total)) + ")";
    }
    showDetails(null);
  }

  function makeChart() {
    var width = Math.max(320, el.chart.clientWidth || window.innerWidth - 24);
    return flamegraph.default()
      .width(width)
      .cellHeight(18)
      .transitionDuration(300)
      .minFrameSize(0.5)
      .sort(true)
      .inverted(el.inverted.checked)
      .tooltip(makeTip())
      .setColorMapper(function (d) { return colorOf(d); })
      .setLabelHandler(label)
      .setDetailsHandler(showDetails)
      .setSearchMatch(matches);
  }

  function render() {
    if (chart) chart.destroy();
    chart = null;
    el.chart.textContent = "";
    tree = buildTree();
    var empty = diffMode ? (tree.total[0] === 0 && tree.total[1] === 0) : tree.total[0] === 0;
    el.empty.hidden = !empty;
    drawLegend();
    if (empty) return;
    chart = makeChart();
    d3.select(el.chart).datum(tree).call(chart);
    applySearch();
  }

  function applySearch() {
    if (chart) search(el.search.value.trim());
  }

  /* ---- header, selectors, table ------------------------------------ */

  function describeProfile(prof, prefix) {
    var m = prof.meta, parts = [];
    if (m.source) parts.push(m.source);
    if (m.pid) parts.push("PID " + m.pid);
    if (m.python) parts.push("Python " + m.python);
    if (m.duration_s) parts.push(m.duration_s.toFixed(2) + " s" + (m.rate_hz ? " at " + Math.round(m.rate_hz) + " Hz" : ""));
    parts.push(fmtInt(prof.total) + " samples");
    var threads = new Set();
    for (var i = 0; i < prof.counts.length; i += 3) threads.add(prof.counts[i]);
    parts.push(threads.size + (threads.size === 1 ? " thread" : " threads"));
    if (m.errors) parts.push(fmtInt(m.errors) + " errors");
    return prefix + parts.join(" \u00b7 ");
  }

  function fillHeader() {
    if (diffMode) {
      var a = profiles[0].meta, b = profiles[1].meta;
      el.title.textContent = "differential flame graph: " + (a.source || "before") + " \u2192 " + (b.source || "after");
      el.summary.textContent = describeProfile(profiles[0], "before: ") + "\n" + describeProfile(profiles[1], "after:  ") +
        "\nRed: a larger share of its own profile after than before; blue: smaller. Widths and deltas are " +
        "percentages of each profile's own total.";
      el.threadLabel.hidden = true;
      el.widthLabel.hidden = false;
      document.title = "framewalk diff";
    } else {
      var meta = profiles[0].meta;
      el.title.textContent = meta.target || meta.source || "";
      el.summary.textContent = describeProfile(profiles[0], "");
      document.title = "framewalk: " + (meta.target || meta.source || "flame graph");
    }
  }

  function fillThreads() {
    if (diffMode) return;
    var prof = profiles[0], per = new Map();
    for (var i = 0; i < prof.counts.length; i += 3)
      per.set(prof.counts[i], (per.get(prof.counts[i]) || 0) + prof.counts[i + 2]);
    var opt = document.createElement("option");
    opt.value = "all";
    opt.textContent = "All threads (" + per.size + ")";
    el.thread.appendChild(opt);
    Array.from(per.keys()).sort(function (a, b) { return per.get(b) - per.get(a); }).forEach(function (t) {
      var o = document.createElement("option");
      o.value = String(t);
      o.textContent = threadLabel(prof, t) + " \u2014 " + fmtPct(pct(per.get(t), prof.total));
      el.thread.appendChild(o);
    });
  }

  /* Per function (line dropped): self and total counts, recursion once. */
  function functionShares(prof) {
    var fns = new Map(), parent = prof.parent, frame = prof.frame, total = 0;
    for (var i = 0; i + 2 < prof.counts.length; i += 3) {
      var n = prof.counts[i + 1], c = prof.counts[i + 2], seen = new Set(), leaf = true;
      total += c;
      for (var m = n; m !== 0; m = parent[m]) {
        var fr = prof.frames[frame[m]] || [0, 0, 0, 3];
        var key = prof.strings[fr[0]] + "\u0000" + prof.strings[fr[1]] + "\u0000" + fr[3];
        var e = fns.get(key);
        if (!e) {
          e = { name: prof.strings[fr[0]] || "?", file: prof.strings[fr[1]] || "", self: 0, total: 0 };
          fns.set(key, e);
        }
        if (leaf) e.self += c;
        leaf = false;
        if (!seen.has(key)) {
          seen.add(key);
          e.total += c;
        }
      }
    }
    return { fns: fns, total: total };
  }

  function fillTable() {
    if (!diffMode) return;
    var b = functionShares(profiles[0]), a = functionShares(profiles[1]), rows = [];
    var keys = new Set(Array.from(b.fns.keys()).concat(Array.from(a.fns.keys())));
    keys.forEach(function (k) {
      var x = b.fns.get(k), y = a.fns.get(k), any = x || y;
      var r = { name: any.name, file: any.file,
                sb: pct(x ? x.self : 0, b.total), sa: pct(y ? y.self : 0, a.total),
                tb: pct(x ? x.total : 0, b.total), ta: pct(y ? y.total : 0, a.total) };
      r.ds = r.sa - r.sb;
      r.dt = r.ta - r.tb;
      r.key = Math.max(Math.abs(r.ds), Math.abs(r.dt));
      rows.push(r);
    });
    rows.sort(function (p, q) { return q.key - p.key || q.ta - p.ta; });
    var head = ["self before", "self after", "self \u0394", "total before", "total after", "total \u0394", "function"];
    var tr = document.createElement("tr");
    head.forEach(function (h) {
      var th = document.createElement("th");
      th.textContent = h;
      tr.appendChild(th);
    });
    el.table.appendChild(tr);
    rows.slice(0, 30).forEach(function (r) {
      var row = document.createElement("tr");
      var cell = function (text, cls) {
        var td = document.createElement("td");
        td.textContent = text;
        if (cls) td.className = cls;
        row.appendChild(td);
      };
      var cls = function (d) { return d > 0.005 ? "fw-up" : d < -0.005 ? "fw-down" : ""; };
      cell(fmtPct(r.sb)); cell(fmtPct(r.sa)); cell(fmtPts(r.ds), cls(r.ds));
      cell(fmtPct(r.tb)); cell(fmtPct(r.ta)); cell(fmtPts(r.dt), cls(r.dt));
      cell(r.name + (r.file ? " (" + r.file + ")" : ""), "fw-fn");
      el.table.appendChild(row);
    });
    el.tableSection.hidden = rows.length === 0;
  }

  /* ---- wiring ------------------------------------------------------------ */

  var searchTimer = null;
  el.search.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(applySearch, 120);
  });
  el.search.addEventListener("keydown", function (e) {
    if (e.key === "Enter") {
      clearTimeout(searchTimer);
      applySearch();
    }
  });
  el.thread.addEventListener("change", render);
  el.width.addEventListener("change", render);
  el.lines.addEventListener("change", render);
  el.inverted.addEventListener("change", function () {
    if (chart) chart.inverted(el.inverted.checked).update();
  });
  el.reset.addEventListener("click", function () { if (chart) chart.resetZoom(); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && chart) chart.resetZoom();
  });
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      if (chart) chart.width(Math.max(320, el.chart.clientWidth)).update();
    }, 200);
  });

  fillHeader();
  fillThreads();
  render();
  fillTable();
  document.body.setAttribute("data-fw-ready", "1");
})();
