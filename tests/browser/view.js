#!/usr/bin/env node
/*
 * Opens one of framewalk's HTML views in Debian's chromium (headless, via
 * playwright-core), drives it as a person would (hover, search, click to
 * zoom, invert, pick a thread) and writes what it saw as JSON, plus
 * screenshots. The pytest files (tests/functional/test_html.py,
 * test_diff.py) make the assertions; this script only observes.
 *
 *   node view.js --html FILE --out REPORT.json --shots DIR
 *                [--hover NAME] [--search TERM] [--click NAME]
 *                [--thread TEXT | --thread-index N] [--width 1400] [--height 900]
 *
 * Every request that is not file: or data: is aborted and listed in the
 * report (the page must work offline); window.alert/confirm/prompt are
 * replaced before the page runs and every element the page ever inserts is
 * recorded, so a name that got parsed as markup shows up.
 */
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const CHROMIUM = process.env.FW_CHROMIUM || "/usr/bin/chromium";
const SETTLE_MS = 900;

function parseArgs(argv) {
  const a = { width: 1400, height: 900 };
  for (let i = 2; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    a[k] = argv[i + 1];
  }
  for (const k of ["html", "out", "shots"])
    if (!a[k]) throw new Error("missing --" + k);
  a.width = Number(a.width);
  a.height = Number(a.height);
  return a;
}

/* In the page: every rendered frame with its datum. */
function frames() {
  return Array.from(document.querySelectorAll("#fw-chart g.frame")).map((g) => {
    const d = g.__data__, n = d.data, rect = g.querySelector("rect");
    const div = g.querySelector("foreignObject div");
    return {
      name: n.name, kind: n.kind, file: n.file || "", depth: d.depth, x0: d.x0, x1: d.x1,
      total: n.total ? n.total[0] : null, self: n.self ? n.self[0] : null,
      totalAfter: n.total ? n.total[1] : null,
      share: n.share || null, delta: n.delta === undefined ? null : n.delta,
      fill: rect ? rect.getAttribute("fill") : null,
      width: rect ? Number(rect.getAttribute("width")) : 0,
      label: div ? div.textContent : "", labelShown: div ? div.style.display !== "none" : false,
      faded: (g.getAttribute("class") || "").includes("fade"),
      transform: g.getAttribute("transform")
    };
  });
}

/* In the page: the centre of the widest rendered frame named `name`. */
function locate(name) {
  let best = null;
  for (const g of document.querySelectorAll("#fw-chart g.frame")) {
    if (g.__data__.data.name !== name) continue;
    const r = g.querySelector("rect").getBoundingClientRect();
    if (r.width > 0 && (!best || r.width > best.w))
      best = { x: r.left + Math.min(r.width / 2, 40), y: r.top + r.height / 2, w: r.width };
  }
  return best;
}

async function main() {
  const args = parseArgs(process.argv);
  const report = { errors: [], console: [], external: [], dialogs: [], screenshots: [] };
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "fw-chromium-"));
  fs.mkdirSync(args.shots, { recursive: true });
  const context = await chromium.launchPersistentContext(userDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: args.width, height: args.height },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  });
  try {
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("file:") || url.startsWith("data:")) return route.continue();
      report.external.push(url);
      return route.abort();
    });
    await context.addInitScript(() => {
      window.__fwAlerts = [];
      window.__fwAdded = [];
      for (const k of ["alert", "confirm", "prompt"])
        window[k] = (m) => { window.__fwAlerts.push(k + ":" + String(m)); };
      new MutationObserver((muts) => {
        for (const m of muts)
          for (const n of m.addedNodes)
            if (n.nodeType === 1) window.__fwAdded.push(n.tagName);
      }).observe(document, { childList: true, subtree: true });
    });
    const page = context.pages()[0] || await context.newPage();
    page.on("pageerror", (e) => report.errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") report.console.push(m.text()); });
    page.on("dialog", (d) => { report.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    const shot = async (name) => {
      const file = path.join(args.shots, name);
      await page.screenshot({ path: file });
      report.screenshots.push(file);
    };

    await page.goto("file://" + path.resolve(args.html));
    await page.waitForSelector("body[data-fw-ready]", { timeout: 15000 });
    report.ready = true;
    report.empty = await page.evaluate(() => !document.getElementById("fw-empty").hidden);
    if (!report.empty) await page.waitForSelector("#fw-chart g.frame", { timeout: 15000 });
    await page.waitForTimeout(SETTLE_MS);
    report.title = await page.title();
    report.header = await page.evaluate(() => ({
      title: document.getElementById("fw-title").textContent,
      summary: document.getElementById("fw-summary").textContent,
      legend: document.getElementById("fw-legend").textContent,
      table: Array.from(document.querySelectorAll("#fw-table tr")).map((tr) =>
        Array.from(tr.children).map((c) => c.textContent))
    }));
    report.frames = await page.evaluate(frames);
    report.threads = await page.evaluate(() =>
      Array.from(document.querySelectorAll("#fw-thread option")).map((o) => o.textContent));
    await shot("view.png");

    if (args.hover) {
      const at = await page.evaluate(locate, args.hover);
      if (at) {
        await page.mouse.move(at.x, at.y);
        await page.waitForTimeout(300);
        report.tooltip = await page.evaluate(() => {
          const t = document.getElementById("fw-tip");
          return { visible: !t.hidden, text: t.innerText, details: document.getElementById("fw-details").textContent };
        });
        await shot("tooltip.png");
        await page.mouse.move(2, 2);
      } else {
        report.tooltip = { visible: false, missing: true };
      }
    }

    if (args.search) {
      await page.fill("#fw-search", args.search);
      await page.press("#fw-search", "Enter");
      await page.waitForTimeout(SETTLE_MS);
      report.search = await page.evaluate(() => ({
        details: document.getElementById("fw-details").textContent,
        highlighted: Array.from(document.querySelectorAll("#fw-chart g.frame"))
          .filter((g) => g.__data__.highlight).map((g) => g.__data__.data.name),
        magenta: Array.from(document.querySelectorAll("#fw-chart g.frame rect"))
          .filter((r) => (r.getAttribute("fill") || "").toLowerCase() === "#e600e6").length
      }));
      await shot("search.png");
      await page.fill("#fw-search", "");
      await page.press("#fw-search", "Enter");
      await page.waitForTimeout(300);
    }

    if (args.click) {
      const at = await page.evaluate(locate, args.click);
      if (at) {
        const before = await page.evaluate(locate, args.click);
        await page.mouse.click(at.x, at.y);
        await page.waitForTimeout(SETTLE_MS);
        const after = await page.evaluate(locate, args.click);
        report.zoom = { before: before.w, after: after ? after.w : 0, frames: await page.evaluate(frames) };
        await shot("zoom.png");
        await page.click("#fw-reset");
        await page.waitForTimeout(SETTLE_MS);
        const reset = await page.evaluate(locate, args.click);
        report.zoom.reset = reset ? reset.w : 0;
      } else {
        report.zoom = { missing: true };
      }
    }

    if (!report.empty) {
      const rootY = () => {
        const g = Array.from(document.querySelectorAll("#fw-chart g.frame")).find((x) => x.__data__.depth === 0);
        return g ? g.getBoundingClientRect().top : null;
      };
      const before = await page.evaluate(rootY);
      await page.check("#fw-inverted");
      await page.waitForTimeout(SETTLE_MS);
      const after = await page.evaluate(rootY);
      await shot("inverted.png");
      await page.uncheck("#fw-inverted");
      await page.waitForTimeout(SETTLE_MS);
      report.inverted = { rootTopBefore: before, rootTopAfter: after };
    }

    if (args.thread || args["thread-index"]) {
      const value = await page.evaluate(([text, index]) => {
        const opts = Array.from(document.querySelectorAll("#fw-thread option"));
        const o = text ? opts.find((x) => x.textContent.includes(text)) : opts[Number(index)];
        return o ? o.value : null;
      }, [args.thread || null, args["thread-index"] || null]);
      if (value !== null) {
        await page.selectOption("#fw-thread", value);
        await page.waitForTimeout(SETTLE_MS);
        report.thread = { value: value, frames: await page.evaluate(frames) };
        await shot("thread.png");
      } else {
        report.thread = { missing: true };
      }
    }

    report.dom = await page.evaluate(() => ({
      alerts: window.__fwAlerts,
      added: window.__fwAdded,
      scripts: document.querySelectorAll("script").length,
      active: document.querySelectorAll("img, iframe, object, embed, video, audio, link, base, form").length,
      bodyText: document.body.innerText.length
    }));
  } finally {
    await context.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  fs.writeFileSync(args.out, JSON.stringify(report, null, 1));
}

main().catch((e) => {
  process.stderr.write("view.js: " + (e && e.stack || e) + "\n");
  process.exit(1);
});
