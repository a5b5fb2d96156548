// Browser test of the navd web viewer (run by `make test-browser`).
//
// Starts bin/navd on a free port with the demo mesh and a throw-away
// database, drives Debian's Chromium (/usr/bin/chromium, never a downloaded
// build) through playwright-core, and checks what a user would see: the mesh
// list, a path drawn between two clicked points, raycast and reachability,
// the agent simulation moving agents toward their target, upload and delete,
// errors shown in the message area, and no console error on the way.
//
// Expected values never come from the viewer: they are asked of the API
// directly with the same points, or derived from the mesh geometry here.
//
// Environment: NAVD_BIN (default bin/navd), CHROMIUM (default
// /usr/bin/chromium), UPDATE_DOCS=1 to refresh docs/viewer.png (it is also
// written when missing). Screenshots go to build/viewer-*.png.
// Prints `N passed, N failed` last and exits non-zero on any failure.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NAVD = process.env.NAVD_BIN || path.join(ROOT, 'bin/navd');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const BUILD = path.join(ROOT, 'build');

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`not ok - ${name}${detail ? ': ' + detail : ''}`);
  }
}

// ---- navd ---------------------------------------------------------------

function startNavd(dbDir) {
  return new Promise((resolve, reject) => {
    const proc = spawn(NAVD, ['--port', '0', '--bind', '127.0.0.1', '--demo', '--db', path.join(dbDir, 'navd.db')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    const timer = setTimeout(() => reject(new Error(`navd did not report its port in 20 s; stderr:\n${err}`)), 20000);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      err += chunk;
      const m = err.match(/navd: listening on (\S+):(\d+)/);
      if (m && !proc.started) {
        proc.started = true;
        clearTimeout(timer);
        resolve({ proc, base: `http://127.0.0.1:${m[2]}` });
      }
    });
    proc.on('error', (e) => { clearTimeout(timer); reject(e); });
    proc.on('exit', (code) => {
      if (!proc.started) { clearTimeout(timer); reject(new Error(`navd exited with ${code}; stderr:\n${err}`)); }
    });
  });
}

async function apiJson(base, method, url, body) {
  const res = await fetch(base + url, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, data: text ? JSON.parse(text) : null };
}

// ---- geometry, computed here independently of the viewer -----------------

// Polygons with their xz outline, centroid (mean of vertices), mean y and area.
function polygonsOf(mesh) {
  return mesh.polygons.map((ids, id) => {
    const pts = ids.map((i) => mesh.vertices[i]);
    let a2 = 0;
    for (let k = 0; k < pts.length; k++) {
      const p = pts[k], q = pts[(k + 1) % pts.length];
      a2 += p[0] * q[2] - q[0] * p[2];
    }
    const c = [0, 1, 2].map((d) => pts.reduce((s, p) => s + p[d], 0) / pts.length);
    return { id, pts, area: Math.abs(a2) / 2, centroid: c };
  });
}

// Point-in-convex-polygon in xz, either winding, with a margin (m) inside.
function insideXZ(poly, x, z, margin) {
  const n = poly.pts.length;
  let sign = 0;
  for (let k = 0; k < n; k++) {
    const a = poly.pts[k], b = poly.pts[(k + 1) % n];
    const ex = b[0] - a[0], ez = b[2] - a[2];
    const len = Math.hypot(ex, ez) || 1;
    const c = (ex * (z - a[2]) - ez * (x - a[0])) / len; // signed distance to the edge line
    if (Math.abs(c) < margin) return false;
    const s = Math.sign(c);
    if (sign === 0) sign = s;
    else if (s !== sign) return false;
  }
  return true;
}

// Centroids of polygons that no other polygon covers in xz (so a click there
// is unambiguous), well inside their polygon.
function clickablePoints(polys) {
  const out = [];
  for (const p of polys) {
    if (p.area < 1.0) continue;
    const [x, , z] = p.centroid;
    if (!insideXZ(p, x, z, 0.3)) continue;
    if (polys.some((q) => q !== p && insideXZ(q, x, z, 0))) continue;
    out.push({ poly: p.id, pt: p.centroid });
  }
  return out;
}

const distXZ = (a, b) => Math.hypot(a[0] - b[0], a[2] - b[2]);

// ---- the test -----------------------------------------------------------

async function main() {
  fs.mkdirSync(BUILD, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navd-browser-'));
  const { proc, base } = await startNavd(tmp);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    await run(browser, base);
    await serviceDown(browser, base, proc);
  } finally {
    await browser.close();
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => { proc.once('exit', r); setTimeout(r, 5000); });
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function run(browser, base) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push('uncaught: ' + (e.stack || e.message)));

  // -- served by navd itself
  const index = await fetch(base + '/');
  check('GET / serves the viewer as HTML', index.status === 200 && /text\/html/.test(index.headers.get('content-type') || ''),
    `status ${index.status}, ${index.headers.get('content-type')}`);
  const js = await fetch(base + '/viewer/viewer.js');
  check('GET /viewer/viewer.js is JavaScript', js.status === 200 && /javascript/.test(js.headers.get('content-type') || ''),
    `status ${js.status}, ${js.headers.get('content-type')}`);

  await page.goto(base + '/');
  const app = page.locator('#app');

  // -- mesh list
  await page.waitForSelector('#mesh-list li[data-name="demo"]', { timeout: 10000 }).catch(() => {});
  const names = await page.locator('#mesh-list li .name').allTextContents();
  check('mesh list shows demo', names.includes('demo'), `list: ${JSON.stringify(names)}`);
  await page.locator('#mesh-list li[data-name="demo"]').click().catch(() => {});
  await page.waitForSelector('#app[data-mesh="demo"][data-ready="1"]', { timeout: 10000 }).catch(() => {});
  check('demo mesh is loaded and drawn', (await app.getAttribute('data-ready')) === '1');

  const meta = (await apiJson(base, 'GET', '/v1/navmeshes/demo')).data;
  const mesh = (await apiJson(base, 'GET', '/v1/navmeshes/demo?format=json')).data;
  const polys = polygonsOf(mesh);
  check('viewer counts the same components as the service',
    Number(await app.getAttribute('data-components')) === meta.components,
    `viewer ${await app.getAttribute('data-components')}, service ${meta.components}`);

  // Every query route the viewer uses must exist: "demo" does, so a 404
  // here means a route went missing, and that fails (it is never skipped).
  for (const ep of ['path', 'raycast', 'reachable', 'step']) {
    const st = (await apiJson(base, 'POST', `/v1/navmeshes/demo/${ep}`, {})).status;
    check(`POST /v1/navmeshes/{name}/${ep} exists`, st !== 404, `status ${st}`);
  }

  const box = await page.locator('#view').boundingBox();
  const toPage = async (pt) => {
    const c = await page.evaluate(([x, z]) => window.navdViewer.worldToCanvas(x, z), [pt[0], pt[2]]);
    return { x: box.x + c.x, y: box.y + c.y };
  };
  const clickWorld = async (pt) => { const p = await toPage(pt); await page.mouse.click(p.x, p.y); };

  // -- path: choose two clickable points whose path has the most corners
  const pts = clickablePoints(polys);
  let best = null;
  const pathOf = async (a, b) => (await apiJson(base, 'POST', '/v1/navmeshes/demo/path', { start: a, end: b, cache: false })).data;
  for (let i = 0; i < pts.length && i < 12; i++) {
    const a = pts[i];
    const b = pts[pts.length - 1 - i];
    if (!b || a === b) continue;
    const r = await pathOf(a.pt, b.pt);
    if (r && r.status === 'complete' && (!best || r.corners.length > best.r.corners.length)) best = { a, b, r };
  }
  check('found two points on the demo mesh joined by a path', !!best, `${pts.length} clickable points`);
  if (best) {
    await clickWorld(best.a.pt);
    await clickWorld(best.b.pt);
    await page.waitForFunction(() => document.getElementById('app').dataset.pathStatus !== '', null, { timeout: 10000 }).catch(() => {});
    // Ask the API with the points the viewer actually sent (a click lands on
    // a whole pixel), after checking they are where the test clicked.
    const sent = await page.evaluate(() => ({ s: window.navdViewer.state.path.start, e: window.navdViewer.state.path.end }));
    const px = 1.5 / (await page.evaluate(() => window.navdViewer.state.view.scale));
    check('clicks map to the intended world points',
      sent.s && sent.e && distXZ(sent.s, best.a.pt) < px && distXZ(sent.e, best.b.pt) < px,
      `sent ${JSON.stringify(sent)}, wanted ${JSON.stringify([best.a.pt, best.b.pt])}`);
    const expected = await pathOf([sent.s[0], best.a.pt[1], sent.s[2]], [sent.e[0], best.b.pt[1], sent.e[2]]);
    const shown = Number(await app.getAttribute('data-path-corners'));
    check(`path with ${expected.corners.length} corners is drawn`, shown === expected.corners.length,
      `viewer shows ${shown}, API says ${expected.corners.length}`);
    check('path status shown', (await app.getAttribute('data-path-status')) === expected.status);
    const drawn = await page.evaluate(() => window.navdViewer.state.path.result.corners);
    const maxDiff = Math.max(...drawn.map((c, i) => (expected.corners[i] ? distXZ(c, expected.corners[i]) : Infinity)));
    check('drawn corners are the API corners', maxDiff < 1e-3, `max xz difference ${maxDiff}`);
    // The corner line is really on the canvas: sample the middle of the first leg.
    const mid = [(drawn[0][0] + drawn[1][0]) / 2, 0, (drawn[0][2] + drawn[1][2]) / 2];
    const pixel = await page.evaluate(([x, z]) => {
      const c = document.getElementById('view');
      const p = window.navdViewer.worldToCanvas(x, z);
      const dpr = window.devicePixelRatio || 1;
      return Array.from(c.getContext('2d').getImageData(Math.round(p.x * dpr), Math.round(p.y * dpr), 1, 1).data);
    }, [mid[0], mid[2]]);
    check('path line is painted on the canvas', pixel[0] > 200 && pixel[1] > 180 && pixel[2] < 140, `pixel ${pixel}`);
    const stats = await page.locator('#path-out').textContent();
    check('path panel shows length, algorithm, cache and latency',
      /length/.test(stats) && /algorithm/.test(stats) && /cache/.test(stats) && /ms/.test(stats), stats);
    check('path went through the cache', ['miss', 'hit'].includes(await app.getAttribute('data-path-cache')),
      `cache: ${await app.getAttribute('data-path-cache')}`);
    // Ticking "expanded" re-asks with debug: true; the count must be the API's.
    await page.check('#show-expanded');
    await page.waitForFunction(() => document.getElementById('app').dataset.pathExpanded !== '', null, { timeout: 10000 }).catch(() => {});
    const dbg = (await apiJson(base, 'POST', '/v1/navmeshes/demo/path',
      { start: sent.s, end: sent.e, debug: true, cache: false })).data;
    const shownEx = await app.getAttribute('data-path-expanded');
    check('expanded polygons shown as the API answers with debug', Array.isArray(dbg.expanded) && Number(shownEx) === dbg.expanded.length,
      `viewer ${shownEx}, API ${dbg.expanded && dbg.expanded.length}`);
    await page.waitForTimeout(200);
    await page.screenshot({ path: path.join(BUILD, 'viewer-path.png') });
  }

  if (best) {
    await pathTools(page, app, base, best, clickWorld, toPage, pathOf);
    // Its refused queries were on purpose: Chromium's own "Failed to load
    // resource" lines for them are forgotten.
    for (let i = consoleErrors.length - 1; i >= 0; i--) if (/Failed to load resource/.test(consoleErrors[i])) consoleErrors.splice(i, 1);
  }

  // -- pan and zoom
  const before = await page.evaluate(() => ({ ...window.navdViewer.state.view }));
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -240);
  await page.waitForTimeout(100);
  const zoomed = await page.evaluate(() => ({ ...window.navdViewer.state.view }));
  check('wheel zooms in', zoomed.scale > before.scale * 1.2, `${before.scale} -> ${zoomed.scale}`);
  // Grabbed away from the path's markers (grabbing one drags the marker).
  await page.mouse.move(box.x + 40, box.y + box.height - 120);
  await page.mouse.down();
  await page.mouse.move(box.x + 120, box.y + box.height - 80, { steps: 5 });
  await page.mouse.up();
  const panned = await page.evaluate(() => ({ ...window.navdViewer.state.view }));
  // With a path drawn, a drag must not count as a click (which would restart it).
  check('drag pans without clicking', Math.abs(panned.cx - zoomed.cx) > 1e-6 &&
    (!best || (await app.getAttribute('data-path-corners')) !== '0'), JSON.stringify(panned));
  await page.keyboard.press('f');
  await page.waitForTimeout(100);

  // -- raycast and reachability agree with the API
  if (best) {
    await page.click('#tools button[data-tool="raycast"]');
    await clickWorld(best.a.pt);
    await clickWorld(best.b.pt);
    await page.waitForFunction(() => document.getElementById('app').dataset.rayHit !== undefined, null, { timeout: 10000 }).catch(() => {});
    const ray = await page.evaluate(() => ({ s: window.navdViewer.state.ray.start, e: window.navdViewer.state.ray.end }));
    if (process.env.DEBUG) console.log(await page.evaluate(() => JSON.stringify({t: window.navdViewer.state.tool, r: window.navdViewer.state.ray, v: window.navdViewer.state.view})), JSON.stringify(best.a.pt), JSON.stringify(await toPage(best.a.pt)), JSON.stringify(box));
    const rayApi = ray.s && (await apiJson(base, 'POST', '/v1/navmeshes/demo/raycast', { start: ray.s, end: ray.e })).data;
    check('raycast hit shown as the API answers', rayApi && (await app.getAttribute('data-ray-hit')) === String(rayApi.hit),
      `viewer ${await app.getAttribute('data-ray-hit')}, API ${rayApi && rayApi.hit}`);

    await page.click('#tools button[data-tool="reach"]');
    await page.fill('#max-cost', '15');
    await clickWorld(best.a.pt);
    await page.waitForFunction(() => document.getElementById('app').dataset.reachPolygons !== undefined, null, { timeout: 10000 }).catch(() => {});
    const rs = await page.evaluate(() => window.navdViewer.state.reach.start);
    const reachApi = rs && (await apiJson(base, 'POST', '/v1/navmeshes/demo/reachable', { start: rs, max_cost: 15 })).data;
    check('reachable polygons shown as the API answers',
      reachApi && Number(await app.getAttribute('data-reach-polygons')) === reachApi.polygons.length,
      `viewer ${await app.getAttribute('data-reach-polygons')}, API ${reachApi && reachApi.polygons.length}`);
    await page.screenshot({ path: path.join(BUILD, 'viewer-reach.png') });
  }

  // -- agents: place some 4..12 m (by path) from a target, run, check they got closer
  await agents(page, app, base, pts, best, clickWorld, pathOf);

  // The README's picture: the path tool again (its result is kept), with the
  // paused agents still drawn on top.
  if (best) {
    await page.click('#tools button[data-tool="path"]');
    await page.uncheck('#show-expanded'); // the corridor alone reads better in a picture
    await page.mouse.move(box.x + box.width - 5, box.y + 5);
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(BUILD, 'viewer.png') });
  }

  await view3d(page, app, polys);

  check('no console errors during normal use', consoleErrors.length === 0, consoleErrors.join(' | '));
  await uploadAndDelete(page, app, base, consoleErrors);
  await largeMesh(page, app, base);

  // -- the README's screenshot
  for (const name of ['viewer.png', 'viewer-3d.png']) {
    const docs = path.join(ROOT, 'docs', name);
    const shot = path.join(BUILD, name);
    if (fs.existsSync(shot) && (process.env.UPDATE_DOCS === '1' || !fs.existsSync(docs))) {
      fs.mkdirSync(path.dirname(docs), { recursive: true });
      fs.copyFileSync(shot, docs);
      console.log(`# wrote ${path.relative(ROOT, docs)}`);
    }
  }
}

async function agents(page, app, base, pts, best, clickWorld, pathOf) {
  await page.click('#tools button[data-tool="agents"]');
  const target = best ? best.b.pt : pts[0] && pts[0].pt;
  const starts = [];
  for (const c of pts) {
    if (starts.length >= 4 || !target) break;
    const r = await pathOf(c.pt, target);
    if (r && r.status === 'complete' && r.length > 4 && r.length < 12 && starts.every((s) => distXZ(s.pt, c.pt) > 2))
      starts.push({ pt: c.pt, len: r.length });
  }
  check('found agent start points near the target', starts.length >= 2, `${starts.length} found`);
  await page.click('#agent-mode button[data-mode="place"]');
  for (const s of starts) await clickWorld(s.pt);
  await page.click('#agent-mode button[data-mode="target"]');
  if (target) await clickWorld(target);
  const placed = await page.evaluate(() => window.navdViewer.state.agents.map((a) => ({ id: a.id, p: a.position, goal: a.goal })));
  check('agents placed by clicking', Number(await app.getAttribute('data-agents')) === starts.length,
    `data-agents ${await app.getAttribute('data-agents')}`);
  await page.waitForTimeout(3000);
  const after = await page.evaluate(() => window.navdViewer.state.agents.map((a) => ({ id: a.id, p: a.position, error: a.error })));
  const steps = Number(await app.getAttribute('data-sim-steps'));
  check('simulation calls step every frame', steps >= 10, `${steps} steps in 3 s`);
  let closer = 0;
  const detail = [];
  for (const a of placed) {
    const b = after.find((x) => x.id === a.id);
    const d0 = (await pathOf(a.p, a.goal)).length;
    const d1 = b ? distXZ(b.p, a.goal) < 0.01 ? 0 : (await pathOf(b.p, a.goal)).length : Infinity;
    detail.push(`${a.id}: ${d0.toFixed(2)} -> ${d1.toFixed(2)}${b && b.error ? ' ' + JSON.stringify(b.error) : ''}`);
    if (d1 < d0 - 1.0) closer++;
  }
  check('every agent moved toward the target (path length fell by > 1 m)', placed.length > 0 && closer === placed.length, detail.join('; '));
  check('viewer counts the agents that moved', Number(await app.getAttribute('data-agents-moved')) >= closer,
    `data-agents-moved ${await app.getAttribute('data-agents-moved')}`);
  await page.fill('#spawn-n', '6');
  await page.click('#spawn');
  check('spawn at random adds agents', Number(await app.getAttribute('data-agents')) === starts.length + 6);
  await page.waitForTimeout(600);
  await page.screenshot({ path: path.join(BUILD, 'viewer-agents.png') });
  await page.click('#play'); // pause
  const s1 = Number(await app.getAttribute('data-sim-steps'));
  await page.waitForTimeout(400);
  const s2 = Number(await app.getAttribute('data-sim-steps'));
  check('pause stops stepping', s2 - s1 <= 1, `${s1} -> ${s2}`);
  await page.click('#step-once');
  await page.waitForFunction((n) => Number(document.getElementById('app').dataset.simSteps) > n, s2, { timeout: 5000 }).catch(() => {});
  check('step once advances one step', Number(await app.getAttribute('data-sim-steps')) === s2 + 1);

  // Clicking an agent inspects it (paused, so it stays where it is clicked).
  const one = await page.evaluate(() => { const a = window.navdViewer.state.agents[0]; return { id: a.id, p: a.position }; });
  const targetsBefore = await page.evaluate(() => JSON.stringify(window.navdViewer.state.target));
  await clickWorld(one.p);
  const shownInspect = (await page.locator('#inspect-out').textContent().catch(() => '')) || '';
  check('clicking an agent inspects it (and neither places one nor moves the target)',
    (await app.getAttribute('data-inspect')) === one.id && shownInspect.includes(one.id) && /neighbours/.test(shownInspect) &&
      Number(await app.getAttribute('data-agents')) === starts.length + 6 &&
      (await page.evaluate(() => JSON.stringify(window.navdViewer.state.target))) === targetsBefore,
    `inspect ${await app.getAttribute('data-inspect')}, ${shownInspect.slice(0, 120)}`);
}

// -- OSRM-style path tools: an off-mesh end, dragging a marker, the address,
//    copy as curl (run with curl) and as JSON, filters, expanded unticked.
async function pathTools(page, app, base, best, clickWorld, toPage, pathOf) {
  const state = () => page.evaluate(() => {
    const P = window.navdViewer.state.path;
    return { start: P.start, end: P.end, result: P.result, runs: Number(document.getElementById('app').dataset.pathRuns || 0) };
  });

  // An end click off the mesh is refused (422); the next click sets the end
  // again, keeping the start (it used to start over).
  await page.keyboard.press('Escape');
  await page.evaluate(() => window.navdViewer.fit());
  await clickWorld(best.a.pt);
  // Zoomed out to a quarter, a click near the canvas corner lies metres
  // beyond the mesh's bounds, out of reach of the service's snapping.
  await page.evaluate(() => { window.navdViewer.state.view.scale *= 0.25; });
  const box = await page.locator('#view').boundingBox();
  await page.mouse.click(box.x + box.width - 4, box.y + box.height - 4);
  await page.waitForFunction(() => document.getElementById('app').dataset.lastError === 'point_off_mesh', null, { timeout: 5000 }).catch(() => {});
  const afterOff = await state();
  check('an off-mesh end is refused and dropped, the start kept', afterOff.start && !afterOff.end && !afterOff.result,
    JSON.stringify({ err: await app.getAttribute('data-last-error'), s: afterOff.start, e: afterOff.end }));
  await page.evaluate(() => window.navdViewer.fit());
  await clickWorld(best.b.pt);
  await page.waitForFunction(() => document.getElementById('app').dataset.pathStatus !== '', null, { timeout: 5000 }).catch(() => {});
  const again = await state();
  check('the click after a refused end sets the end', again.start && again.end && again.result && again.result.status === 'complete',
    JSON.stringify({ s: again.start, e: again.end, st: again.result && again.result.status }));

  // Drag the end marker to the start of the best path's first leg and beyond:
  // the path re-runs while dragging and ends where the marker was dropped.
  const runs0 = again.runs;
  const from = await toPage(again.result.end);
  const target = best.r.corners[1] || best.a.pt;
  const to = await toPage(target);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 6 });
  await page.mouse.move(to.x, to.y, { steps: 6 });
  await page.mouse.up();
  await page.waitForFunction((n) => !window.navdViewer.state.path.inflight && Number(document.getElementById('app').dataset.pathRuns) > n + 1, runs0, { timeout: 8000 }).catch(() => {});
  const dragged = await state();
  const px = 2 / (await page.evaluate(() => window.navdViewer.state.view.scale));
  const api = dragged.end && (await pathOf(dragged.start, dragged.end));
  check('dragging the end marker re-routes live to where it is dropped',
    dragged.runs >= runs0 + 2 && distXZ(dragged.end, target) < px && api &&
      Math.abs(api.length - dragged.result.length) < 1e-3,
    JSON.stringify({ runs: [runs0, dragged.runs], end: dragged.end, target, viewer: dragged.result && dragged.result.length, api: api && api.length }));

  // The address holds the query; a reload restores it and draws the same path.
  const hash = await page.evaluate(() => location.hash);
  check('the address holds the mesh, start and end', /^#demo\?/.test(hash) && /start=/.test(hash) && /end=/.test(hash), hash);
  await page.reload();
  await page.waitForSelector('#app[data-mesh="demo"][data-ready="1"]', { timeout: 10000 }).catch(() => {});
  await page.waitForFunction(() => document.getElementById('app').dataset.pathStatus === 'complete', null, { timeout: 10000 }).catch(() => {});
  const restored = await state();
  check('a reload restores the query and its path', restored.result && Math.abs(restored.result.length - dragged.result.length) < 1e-2 &&
    (await page.evaluate(() => location.hash)) === hash,
    JSON.stringify({ before: dragged.result && dragged.result.length, after: restored.result && restored.result.length }));

  // Filters go into the query: an exclusion of every area the mesh uses
  // leaves no path (the API says the same for the same body).
  const meshJson = (await apiJson(base, 'GET', '/v1/navmeshes/demo?format=json')).data;
  const used = [...new Set(meshJson.areas || [0])];
  await page.evaluate(() => { document.getElementById('path-options').open = true; });
  await page.fill('#opt-exclude', used.join(', '));
  await page.dispatchEvent('#opt-exclude', 'change');
  await page.waitForFunction(() => !window.navdViewer.state.path.inflight, null, { timeout: 5000 }).catch(() => {});
  await page.waitForTimeout(300);
  const body = { start: restored.start, end: restored.end, exclude_areas: used };
  const excl = await apiJson(base, 'POST', '/v1/navmeshes/demo/path', body);
  const shownEx = await state();
  check('filters are sent: excluding every area answers as the API does',
    excl.status >= 400 ? !shownEx.result : shownEx.result && shownEx.result.status === excl.data.status,
    JSON.stringify({ api: excl.status, viewer: shownEx.result && shownEx.result.status }));
  await page.fill('#opt-exclude', '');
  await page.dispatchEvent('#opt-exclude', 'change');
  await page.waitForFunction(() => document.getElementById('app').dataset.pathStatus === 'complete', null, { timeout: 5000 }).catch(() => {});

  // Copy as curl: the command, run by curl, returns the path the viewer shows.
  await page.click('#copy-curl');
  const cmd = await page.inputValue('#query-text');
  let curlOut = null;
  try {
    curlOut = JSON.parse(execFileSync('sh', ['-c', cmd], { encoding: 'utf8', timeout: 10000 }));
  } catch (e) {
    curlOut = { error: String(e.message || e) };
  }
  const shown = await state();
  check('copy as curl gives a command that returns the same path',
    /^curl /.test(cmd) && curlOut && Array.isArray(curlOut.corners) && shown.result &&
      Math.abs(curlOut.length - shown.result.length) < 1e-6 && curlOut.corners.length === shown.result.corners.length,
    `${cmd.slice(0, 200)} -> ${JSON.stringify(curlOut).slice(0, 200)}`);
  await page.click('#copy-json');
  let copied = null;
  try { copied = JSON.parse(await page.inputValue('#query-text')); } catch (e) { copied = null; }
  check('copy as JSON gives the request body', copied && distXZ(copied.start, shown.start) < 1e-9 && distXZ(copied.end, shown.end) < 1e-9,
    JSON.stringify(copied));

  // Unticking "expanded" re-runs the query: no stale expanded count or bypass.
  await page.check('#show-expanded');
  await page.waitForFunction(() => document.getElementById('app').dataset.pathExpanded !== '', null, { timeout: 5000 }).catch(() => {});
  await page.uncheck('#show-expanded');
  await page.waitForFunction(() => document.getElementById('app').dataset.pathExpanded === '', null, { timeout: 5000 }).catch(() => {});
  check('unticking expanded clears the expanded count and the bypass',
    (await app.getAttribute('data-path-expanded')) === '' && (await app.getAttribute('data-path-cache')) !== 'bypass',
    `expanded ${await app.getAttribute('data-path-expanded')}, cache ${await app.getAttribute('data-path-cache')}`);

  // Leave the panel as the rest of the test expects: the long path, options
  // closed, no message covering the canvas.
  await page.evaluate(() => { document.getElementById('path-options').open = false; });
  for (const x of await page.locator('#messages .msg button').all()) await x.click().catch(() => {});
  await page.keyboard.press('Escape');
  await page.evaluate(() => window.navdViewer.fit());
  await clickWorld(best.a.pt);
  await clickWorld(best.b.pt);
  await page.waitForFunction(() => document.getElementById('app').dataset.pathStatus === 'complete', null, { timeout: 5000 }).catch(() => {});
}

// -- a 100,000-polygon mesh: load time, static-layer and overlay frame
//    costs, hover. Figures are printed; the bounds only catch a collapse.
async function largeMesh(page, app, base) {
  const N = 400, M = 250; // 100,000 unit squares on a gently rolling floor
  const vertices = [];
  for (let j = 0; j <= M; j++) for (let i = 0; i <= N; i++) vertices.push([i, Math.sin(i / 40) * 2 + Math.cos(j / 30) * 2, j]);
  const polygons = [];
  for (let j = 0; j < M; j++) for (let i = 0; i < N; i++) {
    const a = j * (N + 1) + i;
    polygons.push([a, a + N + 1, a + N + 2, a + 1]);
  }
  const put = await fetch(base + '/v1/navmeshes/big', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ vertices, polygons }) });
  check('a 100,000-polygon mesh uploads', put.status === 201, `status ${put.status}`);
  const loadMs = await page.evaluate(async () => {
    const t0 = performance.now();
    await window.navdViewer.selectMesh('big');
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - t0;
  });
  const polysShown = Number(await app.getAttribute('data-mesh-polygons'));
  const layerMs = await page.evaluate(() => window.navdViewer.state.perf.layerMs);
  // Pan with the mouse for about a second and count frames and draw costs.
  const box = await page.locator('#view').boundingBox();
  await page.evaluate(() => { const P = window.navdViewer.state.perf; P.draws = 0; P.totalMs = 0; P.maxMs = 0; });
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  const t0 = Date.now();
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  for (let k = 0; k < 60; k++) await page.mouse.move(cx + 200 * Math.sin(k / 10), cy + 100 * Math.cos(k / 10));
  await page.mouse.up();
  const panS = (Date.now() - t0) / 1000;
  const pan = await page.evaluate(() => ({ ...window.navdViewer.state.perf }));
  // Hover: 40 mouse moves over the mesh, each picks the polygon under it.
  const h0 = Date.now();
  for (let k = 0; k < 40; k++) await page.mouse.move(cx + k * 7, cy + k * 3);
  const hoverMs = (Date.now() - h0) / 40;
  const hovered = await page.evaluate(() => window.navdViewer.state.hover && window.navdViewer.state.hover.poly);
  const parts = await page.evaluate(() => window.navdViewer.state.perf);
  console.log(`# large mesh: ${polysShown} polygons load+draw ${loadMs.toFixed(0)} ms (fetch+parse ${parts.fetchMs.toFixed(0)} ms, ` +
    `prepare ${parts.prepareMs.toFixed(0)} ms), static layer ${layerMs.toFixed(1)} ms; ` +
    `pan: ${pan.draws} frames in ${panS.toFixed(2)} s, draw mean ${(pan.totalMs / Math.max(pan.draws, 1)).toFixed(2)} ms, ` +
    `max ${pan.maxMs.toFixed(1)} ms; hover ${hoverMs.toFixed(1)} ms per mouse move (incl. the test's round trip)`);
  check('the 100,000-polygon mesh loads and draws within 10 s', polysShown === N * M && loadMs < 10000, `${polysShown}, ${loadMs.toFixed(0)} ms`);
  check('panning it keeps frames cheap (mean draw < 20 ms)', pan.draws > 0 && pan.totalMs / pan.draws < 20,
    `${pan.draws} draws, mean ${(pan.totalMs / Math.max(pan.draws, 1)).toFixed(2)} ms`);
  check('hover picks a polygon of the large mesh', Number.isInteger(hovered) && hovered >= 0, String(hovered));
  await apiJson(base, 'DELETE', '/v1/navmeshes/big');
}

// -- the header follows the service: navd stopped, the header says so.
async function serviceDown(browser, base, proc) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(base + '/');
  await page.waitForFunction(() => document.getElementById('app').dataset.health === 'ok', null, { timeout: 10000 }).catch(() => {});
  const up = await page.textContent('#health');
  // Another client adds a mesh: the list shows it without a click.
  const square = { vertices: [[0, 0, 0], [4, 0, 0], [4, 0, 4], [0, 0, 4]], polygons: [[0, 3, 2, 1]] };
  await apiJson(base, 'PUT', '/v1/navmeshes/added_elsewhere', square);
  await page.waitForSelector('#mesh-list li[data-name="added_elsewhere"]', { timeout: 10000 }).catch(() => {});
  check('a mesh added by another client appears in the list by itself',
    (await page.locator('#mesh-list li[data-name="added_elsewhere"]').count()) === 1);
  proc.kill('SIGTERM');
  await page.waitForFunction(() => document.getElementById('app').dataset.health === 'down', null, { timeout: 15000 }).catch(() => {});
  const down = await page.textContent('#health');
  check('the header says when navd is down', /ok/.test(up) && /unreachable/.test(down), `${up} -> ${down}`);
  await page.close();
}

// -- the 3-D view: a click picks the surface under the cursor in 3-D, so
//    looking down at a deck picks the deck, and with the floors sliced below
//    it, the floor underneath. Heights come from the mesh's own (flat)
//    polygons, found here.
async function view3d(page, app, polys) {
  // A point covered by two flat polygons at different heights.
  const flat = polys.filter((p) => p.pts.every((v) => Math.abs(v[1] - p.pts[0][1]) < 1e-6));
  let spot = null;
  for (const lo of flat) {
    const [x, , z] = lo.centroid;
    if (!insideXZ(lo, x, z, 0.3)) continue;
    const hi = flat.find((q) => q !== lo && q.pts[0][1] > lo.pts[0][1] + 1 && insideXZ(q, x, z, 0.3));
    if (hi) { spot = { x, z, top: hi.pts[0][1], bottom: lo.pts[0][1] }; break; }
  }
  check('the demo has a deck over a lower floor', !!spot);
  if (!spot) return;
  await page.click('#tools button[data-tool="path"]');
  await page.keyboard.press('Escape');
  await page.click('#mode button[data-mode="3d"]');
  const ok = await page.evaluate(() => !!window.navdViewer.view3d);
  check('the 3-D view starts (WebGL)', ok && (await app.getAttribute('data-mode')) === '3d');
  if (!ok) return;
  // The docs' picture: the whole demo from above and to the side.
  await page.click('#reset-3d');
  await page.evaluate(() => { window.navdViewer.view3d.camera.yaw = -0.5; window.navdViewer.state.dirty = true; });
  await page.mouse.move(5, 5);
  await page.waitForTimeout(200);
  await page.screenshot({ path: path.join(BUILD, 'viewer-3d.png') });
  const aim = async () => {
    await page.evaluate(([x, y, z]) => {
      const v = window.navdViewer.view3d, c = v.centre;
      Object.assign(v.camera, { target: [x - c[0], y - c[1], z - c[2]], yaw: 0.3, pitch: 1.35, dist: 25 });
      window.navdViewer.state.dirty = true;
    }, [spot.x, spot.top, spot.z]);
    await page.waitForTimeout(100);
  };
  const box = await page.locator('#view3d').boundingBox();
  const clickCentre = async () => {
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForTimeout(50);
    const v = await app.getAttribute('data-pick3d');
    return v ? v.split(',').map(Number) : null;
  };
  await aim();
  const top = await clickCentre();
  check('a 3-D click looking down picks the deck', top && Math.abs(top[1] - spot.top) < 0.05 &&
    Math.hypot(top[0] - spot.x, top[2] - spot.z) < 0.05, `picked ${top}, deck y ${spot.top} at ${spot.x}, ${spot.z}`);
  const start = await page.evaluate(() => window.navdViewer.state.path.start);
  check('the 3-D pick is the path tool\'s point', start && top && Math.abs(start[1] - top[1]) < 1e-6, JSON.stringify(start));
  // Slice the floors below the deck: the same click reaches the floor under it.
  const b = await page.evaluate(() => window.navdViewer.state.mesh.bounds);
  const cut = (spot.top + spot.bottom) / 2, span = b.maxY - b.minY + 0.5;
  await page.evaluate((v) => { const e = document.getElementById('slice-hi'); e.value = String(v); e.dispatchEvent(new Event('input')); },
    Math.round((1000 * (cut - (b.minY - 0.25))) / span));
  await page.keyboard.press('Escape');
  await aim();
  const under = await clickCentre();
  check('with the deck sliced away, the click picks the floor under it', under && Math.abs(under[1] - spot.bottom) < 0.05,
    `picked ${under}, floor y ${spot.bottom}`);
  await page.evaluate(() => { const e = document.getElementById('slice-hi'); e.value = '1000'; e.dispatchEvent(new Event('input')); });
  await page.click('#mode button[data-mode="2d"]');
  check('back to the top-down view', (await app.getAttribute('data-mode')) === '2d' &&
    (await page.evaluate(() => window.navdViewer.state.size.w)) > 100);
}

// -- upload (file picker), errors shown, delete
async function uploadAndDelete(page, app, base, consoleErrors) {
  consoleErrors.length = 0;
  await page.setInputFiles('#file-input', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"vertices": [[0,0,0]],') });
  const msg = page.locator('#messages .msg:not(.info)').last();
  await msg.waitFor({ timeout: 5000 }).catch(() => {});
  const msgText = (await msg.textContent().catch(() => '')) || '';
  check('a rejected upload shows the error code and message', /invalid_json|invalid_navmesh|bad_request/.test(msgText) && msgText.length > 20, msgText);
  // A 4xx response is logged by Chromium itself as "Failed to load resource"; nothing else may appear.
  const unexpected = consoleErrors.filter((t) => !/Failed to load resource/.test(t));
  check('errors are shown without script errors', unexpected.length === 0, unexpected.join(' | '));

  const square = 'v 0 0 0\nv 4 0 0\nv 4 0 4\nv 0 0 4\nf 1 2 3 4\n';
  await page.fill('#upload-name', 'browser_square');
  await page.setInputFiles('#file-input', { name: 'square.obj', mimeType: 'model/obj', buffer: Buffer.from(square) });
  await page.waitForSelector('#mesh-list li[data-name="browser_square"]', { timeout: 5000 }).catch(() => {});
  const stored = (await apiJson(base, 'GET', '/v1/navmeshes/browser_square')).data;
  check('OBJ upload stores the mesh', stored && stored.polygons === 1, JSON.stringify(stored));
  await page.waitForSelector('#app[data-mesh="browser_square"][data-ready="1"]', { timeout: 5000 }).catch(() => {});
  check('the uploaded mesh is selected', (await app.getAttribute('data-mesh')) === 'browser_square');
  const del = page.locator('#mesh-list li[data-name="browser_square"] button.del');
  await del.click();
  await del.click();
  await page.waitForSelector('#mesh-list li[data-name="browser_square"]', { state: 'detached', timeout: 5000 }).catch(() => {});
  const gone = await apiJson(base, 'GET', '/v1/navmeshes/browser_square');
  check('delete removes the mesh', gone.status === 404, `status ${gone.status}`);
  const left = consoleErrors.filter((t) => !/Failed to load resource/.test(t));
  check('no console errors during upload and delete', left.length === 0, left.join(' | '));
}

try {
  await main();
} catch (e) {
  failed++;
  console.log(`not ok - test harness: ${e && e.stack ? e.stack : e}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
