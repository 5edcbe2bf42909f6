#!/usr/bin/env node
// End-to-end test of the mdseek VS Code extension in a real VS Code workbench
// (code-server 4.100.3 = VS Code 1.100.3) driven through headless Chromium.
//
//   node test/e2e/run.mjs [spec.json]        (npm run e2e -- [spec.json])
//
// spec.json (default: test/e2e/default-spec.json) holds the queries and
// expectations; see that file. Environment:
//   MDSEEK_PYTHON          python that has mdseek (default /work/main/.venv/bin/python)
//   MDSEEK_E2E_WORKSPACE   workspace to copy (default: spec.workspace or /work/main/fixtures)
//   MDSEEK_E2E_OUT         screenshots + logs (default vscode-client/test-output/)
//   MDSEEK_E2E_CACHE       where install-e2e-deps.sh put code-server/playwright
//   MDSEEK_CODE_SERVER     code-server binary (default: from the cache)
//   MDSEEK_E2E_VSIX        use this .vsix instead of building one
//   MDSEEK_E2E_READY_TIMEOUT  seconds to wait for "mdseek ready" (default 300)
//   MDSEEK_E2E_HEADED=1    (debug) keep nothing headless-specific
//
// Prints a final line "e2e: N passed, M failed" and exits non-zero on failure.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLIENT_DIR = path.resolve(HERE, '..', '..');
const REPO = path.resolve(CLIENT_DIR, '..');
const CACHE = process.env.MDSEEK_E2E_CACHE || path.join(os.homedir(), '.cache', 'mdseek-e2e');
const OUT = path.resolve(process.env.MDSEEK_E2E_OUT || path.join(CLIENT_DIR, 'test-output'));
const SPEC_PATH = path.resolve(process.argv[2] || path.join(HERE, 'default-spec.json'));
const READY_TIMEOUT = Number(process.env.MDSEEK_E2E_READY_TIMEOUT || 300) * 1000;
const T0 = Date.now();

// ------------------------------------------------------------------ results
let passed = 0;
let failed = 0;
const failures = [];
const timings = [];
const elapsed = () => ((Date.now() - T0) / 1000).toFixed(1);
const log = (...a) => console.log(`[e2e ${elapsed()}s]`, ...a);

async function check(name, fn) {
  const t = Date.now();
  try {
    const note = await fn();
    passed++;
    log(`PASS ${name}${note ? ` — ${note}` : ''} (${((Date.now() - t) / 1000).toFixed(1)}s)`);
    timings.push([name, Date.now() - t]);
    return true;
  } catch (err) {
    failed++;
    const msg = err && err.message ? err.message : String(err);
    failures.push(`${name}: ${msg}`);
    log(`FAIL ${name}: ${msg}`);
    timings.push([name, Date.now() - t]);
    if (page) await shot(`FAIL-${slug(name)}`).catch(() => {});
    return false;
  }
}

function collectLogs() {
  // the extension's "mdseek" output channel (client log + server stderr)
  try {
    const logs = path.join(tmpRoot, 'user-data', 'logs');
    const found = [];
    const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p); else if (/mdseek\.log$/.test(e.name)) found.push(p);
    } };
    walk(logs);
    if (found.length) fs.writeFileSync(path.join(OUT, 'mdseek-output.log'), found.map((f) => fs.readFileSync(f, 'utf8')).join('\n'));
  } catch { /* no logs */ }
}

function finish(code) {
  if (tmpRoot) collectLogs();
  log('timings:', timings.map(([n, ms]) => `${n}=${(ms / 1000).toFixed(1)}s`).join(', '));
  if (failures.length) {
    console.log('failures:');
    for (const f of failures) console.log(`  - ${f}`);
  }
  console.log(`screenshots and logs: ${OUT}`);
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  cleanup();
  process.exit(code ?? (failed ? 1 : 0));
}

function fatal(msg) {
  failed++;
  failures.push(msg);
  log(`FATAL ${msg}`);
  finish(1);
}

// ------------------------------------------------------------------ process hygiene
let csProc;
let browser;
let page;
let tmpRoot;
function cleanup() {
  if (csProc && csProc.pid && !csProc.__killed) {
    csProc.__killed = true;
    try { process.kill(-csProc.pid, 'SIGTERM'); } catch { /* gone */ }
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline) {
      try { process.kill(-csProc.pid, 0); } catch { break; }
      spawnSync('sleep', ['0.1']);
    }
    try { process.kill(-csProc.pid, 'SIGKILL'); } catch { /* gone */ }
  }
  if (browser && browser.__proc && browser.__proc.pid) {
    try { process.kill(browser.__proc.pid, 'SIGKILL'); } catch { /* gone */ }
  }
  if (tmpRoot && !process.env.MDSEEK_E2E_KEEP) {
    try { fs.rmSync(tmpRoot, { recursive: true, force: true }); } catch { /* ignore */ }
  }
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { log(`got ${sig}`); failed++; failures.push(`interrupted by ${sig}`); finish(130); });
}
process.on('unhandledRejection', (e) => fatal(`unhandled rejection: ${e && e.stack ? e.stack : e}`));
process.on('uncaughtException', (e) => fatal(`uncaught exception: ${e && e.stack ? e.stack : e}`));

// ------------------------------------------------------------------ helpers
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const slug = (s) => String(s).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60);
let shotNo = 0;
async function shot(name) {
  const file = path.join(OUT, `${String(++shotNo).padStart(2, '0')}-${slug(name)}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** A tight picture of the quick input (for the README), in OUT. */
async function clipQuickInput(name) {
  const box = await page.locator('.quick-input-widget').boundingBox();
  if (box) {
    await page.screenshot({ path: path.join(OUT, name),
      clip: { x: Math.max(0, box.x - 8), y: Math.max(0, box.y - 8), width: box.width + 16, height: box.height + 16 } });
  }
}

async function waitFor(desc, fn, timeoutMs, intervalMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) { last = e; }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${desc}${last ? ` (last error: ${last.message})` : ''}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout || '').slice(-2000)}`);
  }
  return r.stdout;
}

/** 0-based line of the first ATX heading whose text equals `heading`. */
function headingLineOf(file, heading) {
  const lines = fs.readFileSync(file, 'utf8').split(/\r?\n/);
  const norm = (s) => s.replace(/\s+#+\s*$/, '').trim();
  let fence = null;
  for (let i = 0; i < lines.length; i++) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(lines[i]);
    if (f) {
      if (!fence) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence) continue;
    const m = /^\s{0,3}#{1,6}\s+(.*)$/.exec(lines[i]);
    if (m && norm(m[1]) === heading.trim()) return i;
  }
  throw new Error(`heading "${heading}" not found in ${file}`);
}

/** 0-based character just inside the first Markdown link on `line` (preferring one to `targetPath`). */
function linkCharacter(file, line, targetPath) {
  const text = fs.readFileSync(file, 'utf8').split(/\r?\n/)[line] ?? '';
  const links = [...text.matchAll(/\[([^\]]*)\]\(([^)]*)\)/g)];
  if (!links.length) throw new Error(`no Markdown link on ${file}:${line + 1}: ${JSON.stringify(text)}`);
  const base = targetPath ? path.basename(targetPath) : null;
  const m = links.find((l) => base && l[2].includes(base)) || links[0];
  return m.index + 1 + Math.min(2, Math.max(0, m[1].length - 1));
}

/** PIDs of mdseek server processes inside code-server's process group. */
function serverPids() {
  if (!csProc || !csProc.pid) return [];
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgid !== csProc.pid) continue;
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (cmd.includes('--stdio') && cmd.includes('mdseek')) out.push(Number(d));
    } catch { /* raced */ }
  }
  return out;
}

// ------------------------------------------------------------------ spec
if (!fs.existsSync(SPEC_PATH)) fatal(`spec file ${SPEC_PATH} does not exist`);
const spec = JSON.parse(fs.readFileSync(SPEC_PATH, 'utf8'));
const SRC_WS = path.resolve(path.dirname(SPEC_PATH),
  process.env.MDSEEK_E2E_WORKSPACE || spec.workspace || path.join(REPO, 'fixtures'));
const PYTHON = process.env.MDSEEK_PYTHON || path.join(REPO, '.venv', 'bin', 'python');
const SERVER_CMD = [PYTHON, '-m', 'mdseek', 'serve'];

// ------------------------------------------------------------------ VS Code UI helpers
const STATUS_SEL = '.statusbar-item[aria-label^="mdseek: "], .statusbar-item:has([aria-label^="mdseek: "])';

async function mdseekStatusLabel() {
  return page.evaluate(() => {
    const el = [...document.querySelectorAll('.statusbar [aria-label]')]
      .find((e) => (e.getAttribute('aria-label') || '').startsWith('mdseek: '));
    return el ? el.getAttribute('aria-label') : null;
  });
}

async function editorCursor() {
  // "Ln 12, Col 1" in the status bar (1-based)
  const txt = await page.evaluate(() => {
    const el = document.getElementById('status.editor.selection')
      || [...document.querySelectorAll('.statusbar-item')].find((e) => /Ln \d+, Col \d+/.test(e.textContent || ''));
    return el ? el.textContent : null;
  });
  const m = /Ln (\d+), Col (\d+)/.exec(txt || '');
  return m ? { line: Number(m[1]), col: Number(m[2]), text: txt.trim() } : null;
}

async function activeTabLabel() {
  return page.evaluate(() => {
    const t = document.querySelector('.editor-group-container.active .tab.active')
      || document.querySelector('.tab.active');
    return t ? (t.getAttribute('aria-label') || t.textContent || '').trim() : null;
  });
}

async function quickInputVisible() {
  return page.locator('.quick-input-widget').isVisible().catch(() => false);
}

async function closeQuickInput() {
  for (let i = 0; i < 3 && (await quickInputVisible()); i++) {
    await page.keyboard.press('Escape');
    await waitFor('the quick input to close', async () => !(await quickInputVisible()), 2000, 50).catch(() => {});
  }
}

async function runCommand(title) {
  await closeQuickInput();
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible', timeout: 10000 });
  await page.keyboard.press('Enter');
}

async function quickPickRows() {
  return page.evaluate(() => [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')].map((r) => ({
    label: (r.querySelector('.label-name, .monaco-icon-label .label-name')?.textContent
      || r.querySelector('.monaco-icon-label')?.textContent || '').trim(),
    description: (r.querySelector('.label-description')?.textContent || '').trim(),
    detail: (r.querySelector('.quick-input-list-label-meta, .monaco-icon-label-container + *, .quick-input-list-detail')?.textContent || '').trim(),
    aria: r.getAttribute('aria-label') || '',
    index: Number(r.getAttribute('data-index')),
    focused: r.classList.contains('focused'),
  })).sort((a, b) => a.index - b.index));
}

async function quickPickTitle() {
  return page.evaluate(() => document.querySelector('.quick-input-widget .quick-input-title')?.textContent?.trim() || '');
}

/** The status bar items that show indexing progress (mdseek's, or a second
 * one: VS Code's window progress for the server's work-done progress). */
async function progressItems() {
  return page.evaluate(() => [...document.querySelectorAll('.statusbar .statusbar-item')]
    .map((e) => `${e.id} ${(e.querySelector('[aria-label]') || e).getAttribute('aria-label') || ''} ${e.textContent || ''}`.replace(/\s+/g, ' ').trim())
    .filter((t) => /status\.progress|mdseek|embedded|parsed|chunks|passages|indexing/i.test(t)));
}

/** The code lenses on screen: their texts. */
async function lensTexts() {
  return page.evaluate(() => [...document.querySelectorAll('.editor-group-container.active .codelens-decoration')]
    .map((e) => (e.textContent || '').replace(/\s+/g, ' ').trim()).filter(Boolean));
}

/** The fenced blocks of markdown `md`, each as its lines (fences included); throws on one left open. */
function fencedBlocks(md) {
  const blocks = [];
  let cur = null;
  for (const ln of md.split('\n')) {
    if (/^\s*(```|~~~)/.test(ln)) {
      if (!cur) cur = [ln];
      else { blocks.push([...cur, ln]); cur = null; }
    } else if (cur) cur.push(ln);
  }
  if (cur) throw new Error(`a fenced block left open in ${JSON.stringify(md.slice(0, 300))}`);
  return blocks;
}

/** Types `query` into the mdseek QuickPick and waits until `heading` is listed. */
async function searchInQuickPick(query, heading, { timeoutMs = 20000, retype = 0, viaKey = false } = {}) {
  if (viaKey) {
    // the default keybinding the extension contributes
    await closeQuickInput();
    await page.keyboard.press('Control+Alt+M');
  } else {
    await runCommand('mdseek: Search sections');
  }
  const input = page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await waitFor('the mdseek QuickPick', async () => (await quickPickTitle()).startsWith('mdseek: Search sections'), 10000);
  // type like a person (the extension debounces keystrokes)
  await page.keyboard.type(query, { delay: 15 });
  let attempt = 0;
  const start = Date.now();
  for (;;) {
    try {
      await waitFor(`"${heading}" in the QuickPick for "${query}"`, async () => {
        const rows = await quickPickRows();
        return rows.some((r) => r.label === heading) ? rows : null;
      }, Math.min(timeoutMs, retype ? 5000 : timeoutMs));
      break;
    } catch (e) {
      if (attempt++ >= retype || Date.now() - start > timeoutMs) {
        const rows = await quickPickRows().catch(() => []);
        throw new Error(`${e.message}; listed: ${JSON.stringify(rows.map((r) => r.label))}; title: "${await quickPickTitle()}"`);
      }
      // a person would retype the query after a moment
      await input.fill('');
      await waitForPickerAnswer('');
      await page.keyboard.type(query, { delay: 10 });
    }
  }
  // the list on screen is the answer to the whole typed query (not to a
  // prefix typed earlier): ask the extension, the picker stays open
  await waitForPickerAnswer(query);
  const rows = await quickPickRows();
  const idx = rows.findIndex((r) => r.label === heading);
  if (idx < 0) throw new Error(`"${heading}" disappeared from the QuickPick; listed: ${JSON.stringify(rows.map((r) => r.label))}`);
  return { rows, idx, title: await quickPickTitle() };
}

/** Moves the QuickPick focus to row `idx` with the arrow keys (on the focused
 * row already: down and back up, as a person does to see its preview). */
async function focusRow(idx) {
  const rows = await quickPickRows();
  const focused = Math.max(0, rows.findIndex((r) => r.focused));
  if (idx === focused && rows.length > 1) {
    await page.keyboard.press(idx + 1 < rows.length ? 'ArrowDown' : 'ArrowUp');
    await waitFor('the focus to move', async () => !(await quickPickRows()).some((r) => r.focused && r.index === idx), 5000, 50);
  }
  const now = Math.max(0, (await quickPickRows()).findIndex((r) => r.focused));
  const delta = idx - now;
  for (let i = 0; i < Math.abs(delta); i++) await page.keyboard.press(delta > 0 ? 'ArrowDown' : 'ArrowUp');
  await waitFor(`row ${idx} focused`, async () => (await quickPickRows()).some((r) => r.focused && r.index === idx), 5000, 50);
}

/** Moves the QuickPick focus to row `idx` and presses Enter. */
async function acceptRow(idx) {
  await focusRow(idx);
  await page.keyboard.press('Enter');
}

let selfTestNo = 0;
async function selfTest(args = {}, { keepPicker = false, during = null } = {}) {
  const outFile = path.join(tmpRoot, `selftest-${++selfTestNo}.json`);
  const json = JSON.stringify({ ...args, outFile });
  // executed through the real workbench: a keybinding-less hidden command,
  // run via the developer "executeCommand" path of the command palette is not
  // possible (hidden), so we use a tiny keybinding installed in the settings
  // (it works with the picker open, too).
  if (!keepPicker) await closeQuickInput();
  fs.writeFileSync(path.join(tmpRoot, 'selftest-args.json'), json);
  await page.keyboard.press('Control+Alt+Shift+F12');
  if (during) await during();
  return waitFor('self-test output', () => (fs.existsSync(outFile) ? JSON.parse(fs.readFileSync(outFile, 'utf8')) : null), 30000);
}

/** Until the search picker has answered `query` (the extension's own record). */
async function waitForPickerAnswer(query, timeoutMs = 30000) {
  return waitFor(`the picker's answer to "${query}"`, async () => {
    const st = await selfTest({}, { keepPicker: true });
    const p = st.picker;
    return p && p.value === query && p.settled ? p : null;
  }, timeoutMs, 100);
}

async function openFile(rel) {
  await closeQuickInput();
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(rel);
  const base = path.basename(rel);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: base }).first().waitFor({ state: 'visible', timeout: 10000 });
  await waitFor(`"${base}" focused in Quick Open`, async () => page.evaluate((b) => {
    const r = document.querySelector('.quick-input-list .monaco-list-row.focused');
    return !!r && (r.textContent || '').includes(b);
  }, base), 10000, 50);
  await page.keyboard.press('Enter');
  await waitFor(`editor tab ${base}`, async () => ((await activeTabLabel()) || '').includes(base), 10000);
  await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus().catch(() => {});
}

async function gotoLine(line1, col1 = 1) {
  await closeQuickInput();
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`:${line1}:${col1}`);
  await sleep(200);
  await page.keyboard.press('Enter');
  await waitFor(`cursor at Ln ${line1}, Col ${col1}`, async () => {
    const c = await editorCursor();
    return c && c.line === line1 && c.col === col1;
  }, 5000);
}

// ------------------------------------------------------------------ rename and file moves
// (the test's own link reader: every link target written in the markdown files
// of the rename fixture, resolved to a file and a heading line by hand-written
// rules, sharing nothing with the server)

const RENAME_FILES = ['index.md', 'guide/setup.md', 'notes', 'deep/a/b/c.md'];

function mdFilesUnder(ws) {
  const out = [];
  const walk = (rel) => {
    const abs = path.join(ws, rel);
    if (!fs.existsSync(abs)) return;
    if (fs.statSync(abs).isDirectory()) for (const f of fs.readdirSync(abs)) walk(path.posix.join(rel, f));
    else if (rel.endsWith('.md')) out.push(rel);
  };
  for (const r of RENAME_FILES) walk(r);
  for (const d of ['manuals', 'docs']) walk(d);
  return out.sort();
}

function linkTargets(text) {
  const out = [];
  let fence = false;
  for (const [i, raw] of text.split('\n').entries()) {
    if (raw.startsWith('```')) { fence = !fence; continue; }
    if (fence || raw.startsWith('    ') || /^#{1,6}\s/.test(raw)) continue;
    const line = raw.replace(/`[^`]*`/g, (m) => ' '.repeat(m.length)).replace(/<[a-z]+:\/\/[^>]*>/g, (m) => ' '.repeat(m.length));
    const def = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
    if (def) { out.push({ line: i, kind: 'md', written: def[1] }); continue; }
    for (const m of line.matchAll(/!?\[[^\]]*\]\((<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\)/g)) if (!m[1].includes('://')) out.push({ line: i, kind: 'md', written: m[1] });
    for (const m of line.matchAll(/\[\[([^\]|]*)(?:\|[^\]]*)?\]\]/g)) out.push({ line: i, kind: 'wiki', written: m[1] });
  }
  return out;
}

/** {file: [[target file, heading line or null] per link]}; throws on a broken link. */
function resolveAll(ws) {
  const files = mdFilesUnder(ws);
  const res = {};
  const headingLineOfText = (file, text) => {
    const i = fs.readFileSync(path.join(ws, file), 'utf8').split('\n').findIndex((l) => /^#{1,6}\s/.test(l) && l.replace(/^#+\s+/, '').trim().toLowerCase() === text.toLowerCase());
    if (i < 0) throw new Error(`no heading "${text}" in ${file}`);
    return i;
  };
  for (const f of files) {
    res[f] = linkTargets(fs.readFileSync(path.join(ws, f), 'utf8')).map(({ kind, written }) => {
      if (kind === 'md') {
        const angle = written.startsWith('<');
        const dest = angle ? written.slice(1, -1) : written;
        const [p0, frag] = dest.split('#');
        const p = angle ? p0 : decodeURIComponent(p0);
        let rel = !p ? f : p.startsWith('/') ? path.posix.normalize(p.slice(1)) : path.posix.normalize(path.posix.join(path.posix.dirname(f), p));
        if (!fs.existsSync(path.join(ws, rel)) && fs.existsSync(path.join(ws, rel + '.md'))) rel += '.md';
        if (!fs.existsSync(path.join(ws, rel))) throw new Error(`${f}: ${written} -> missing ${rel}`);
        return [rel, frag ? headingLineOfSlug(path.join(ws, rel), frag) : null];
      }
      const [name, head] = written.split('#');
      let rel = f;
      if (name) {
        const found = files.filter((x) => path.posix.basename(x, '.md').toLowerCase() === name.toLowerCase() || x.slice(0, -3).toLowerCase() === name.toLowerCase());
        if (found.length !== 1) throw new Error(`${f}: [[${written}]] -> ${JSON.stringify(found)}`);
        rel = found[0];
      }
      return [rel, head ? headingLineOfText(rel, head) : null];
    });
  }
  return res;
}

async function renameAndMove(ws, R) {
  const before = resolveAll(ws);
  const H = R.heading;
  await check(`F2 renames the heading "${H.old}" in ${H.path} and every link follows`, async () => {
    await openFile(H.path);
    await gotoLine(H.line + 1, 5);
    await page.keyboard.press('F2');
    const box = page.locator('.rename-box input, .rename-box .rename-input').first();
    await box.waitFor({ state: 'visible', timeout: 15000 });
    const shown = await box.inputValue().catch(() => null);
    if (shown !== H.old) throw new Error(`the rename box offers ${JSON.stringify(shown)}, expected ${JSON.stringify(H.old)} (the heading's text)`);
    await box.fill(H.newName); // focuses the box first (Ctrl+A before focus arrives selects the document)
    if ((await box.inputValue()) !== H.newName) throw new Error('could not type into the rename box');
    await widgetShot('.rename-box', 'readme-rename.png');
    await page.keyboard.press('Enter');
    await waitFor('the heading renamed in the editor', async () => {
      const st = await selfTest({});
      return st.activeEditor && st.activeEditor.lineText === `## ${H.newName}`;
    }, 20000, 200);
    await selfTest({ saveAll: true });
    const log = fs.readFileSync(path.join(ws, R.checkFile), 'utf8');
    for (const want of R.afterRename) if (!log.includes(want)) throw new Error(`${R.checkFile} lacks ${want} after the rename`);
    const after = resolveAll(ws);
    if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error(`links moved: ${JSON.stringify(after).slice(0, 400)}`);
    // and the server's own definition agrees: F12 on the first rewritten link lands on the heading
    const lines = log.split('\n');
    const ln = lines.findIndex((l) => l.includes(R.afterRename[0]));
    const landed = await followLink(R.checkFile, ln, lines[ln].indexOf(R.afterRename[0]) + 2, path.join(ws, H.path), H.line);
    return `links resolve as before (${Object.values(after).flat().length} links); F12 lands on "${landed.trim()}"`;
  });
  const M = R.move;
  await check(`moving ${M.from} to ${M.to} in the Explorer (F2 on the file) keeps every link`, async () => {
    const mid = resolveAll(ws);
    const typed = path.posix.relative(path.posix.dirname(M.from), M.to); // the Explorer's box takes a path
    if (typed.startsWith('..')) throw new Error(`the spec's move ${M.from} -> ${M.to} leaves the folder: the Explorer's rename box cannot`);
    await runCommand('View: Close All Editors');
    await openFile(M.from);
    await runCommand('File: Reveal Active File in Explorer View');
    const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: path.posix.basename(M.from) }).first();
    await row.waitFor({ state: 'visible', timeout: 10000 });
    await runCommand('View: Close All Editors'); // the file is moved, not an open editor of it
    await row.click();
    await page.keyboard.press('F2');
    const box = page.locator('.explorer-folders-view .monaco-inputbox input').first();
    await box.waitFor({ state: 'visible', timeout: 10000 });
    const shown = await box.inputValue();
    if (shown !== path.posix.basename(M.from)) throw new Error(`the Explorer's rename box offers ${JSON.stringify(shown)}`);
    await box.fill(typed);
    await page.screenshot({ path: path.join(OUT, 'readme-file-move-explorer.png') });
    await page.keyboard.press('Enter');
    // VS Code asks before applying a file move's refactoring edits: OK, as a user would
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'refactoring changes' }).first();
    await dialog.waitFor({ state: 'visible', timeout: 20000 });
    await page.screenshot({ path: path.join(OUT, 'readme-file-move-confirm.png') });
    await dialog.locator('.monaco-button', { hasText: /^OK$/ }).first().click();
    await waitFor(`${M.to} on disk`, () => fs.existsSync(path.join(ws, M.to)) && !fs.existsSync(path.join(ws, M.from)), 10000);
    // the edits land in open editors (the files that had to change are opened): save them
    await waitFor('the links rewritten and saved', async () => {
      await selfTest({ saveAll: true });
      return R.afterMove.every(([f, want]) => fs.readFileSync(path.join(ws, f), 'utf8').includes(want));
    }, 20000, 200)
      .catch(() => { throw new Error(`after the move: ${R.afterMove.map(([f]) => fs.readFileSync(path.join(ws, f), 'utf8')).join('\n---\n').slice(0, 600)}`); });
    const after = resolveAll(ws);
    const mv = (f) => (f === M.from ? M.to : f);
    const want = Object.fromEntries(Object.entries(mid).map(([f, ls]) => [mv(f), ls.map(([t, h]) => [mv(t), h])]));
    const sortKeys = (o) => JSON.stringify(Object.fromEntries(Object.entries(o).sort()));
    if (sortKeys(after) !== sortKeys(want)) throw new Error(`links moved: ${sortKeys(after).slice(0, 400)}`);
    await openFile(R.moveShot);
    await page.evaluate(() => document.querySelectorAll('.notifications-toasts .codicon-notifications-clear, .notifications-toasts .codicon-close').forEach((b) => b.click())).catch(() => {});
    await sleep(500);
    await page.screenshot({ path: path.join(OUT, 'readme-file-move.png') });
    return `${M.from} -> ${M.to}: links resolve as before`;
  });
}

// ------------------------------------------------------------------ links by meaning
// (self-contained: the "Link to related section" code action and completion by
// meaning after '](' , each applied through the real UI and followed with F12)

/** The first inline link `[text](dest)` on `lineText` whose dest contains `want`: {text, dest, col}. */
function linkOn(lineText, want) {
  const m = [...lineText.matchAll(/\[([^\]]*)\]\(([^)]*)\)/g)].find((x) => !want || x[2].includes(want));
  return m ? { text: m[1], dest: m[2], col: m.index } : null;
}

/** 0-based line of the heading whose GitHub anchor the server wrote, found through the outline API-free way: the slug of each heading text. */
function headingLineOfSlug(file, slug) {
  const lines = fs.readFileSync(file, 'utf8').split(/\r?\n/);
  const seen = new Map();
  let fence = null;
  for (let i = 0; i < lines.length; i++) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(lines[i]);
    if (f) { if (!fence) fence = f[1][0]; else if (f[1][0] === fence) fence = null; continue; }
    if (fence) continue;
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(lines[i]);
    if (!m) continue;
    const base = m[1].replace(/[*_`]/g, '').toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(base);
    const s = n === undefined ? base : `${base}-${n + 1}`;
    seen.set(base, n === undefined ? 0 : n + 1);
    if (s === decodeURIComponent(slug)) return i;
  }
  throw new Error(`no heading with anchor #${slug} in ${file}`);
}

/** F12 on `rel`:`line`:`col` (0-based) must land on `target` at `wantLine`. */
async function followLink(rel, line, col, target, wantLine) {
  await openFile(rel);
  await gotoLine(line + 1, col + 1);
  await page.keyboard.press('F12');
  await waitFor(`editor ${path.basename(target)}`, async () => ((await activeTabLabel()) || '').includes(path.basename(target)), 10000);
  const cur = await waitFor(`cursor on line ${wantLine + 1}`, async () => {
    const k = await editorCursor();
    return k && k.line === wantLine + 1 ? k : null;
  }, 5000).catch(async () => { throw new Error(`F12 landed at ${JSON.stringify(await editorCursor())}, expected Ln ${wantLine + 1}`); });
  return cur.text;
}

async function widgetShot(selector, name) {
  const box = await page.locator(selector).first().boundingBox().catch(() => null);
  const editor = await page.locator('.editor-group-container.active').first().boundingBox().catch(() => null);
  if (!box || !editor) return;
  const x = Math.max(0, editor.x);
  const y = Math.max(0, Math.min(box.y, editor.y) - 4);
  const w = Math.min(editor.width, 1100);
  const h = Math.min(Math.max(box.y + box.height, editor.y + 160) - y + 8, 520);
  await page.screenshot({ path: path.join(OUT, name), clip: { x, y, width: w, height: h } });
}

async function linkByMeaning(ws, L) {
  const rel = L.draft;
  const abs = path.join(ws, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, L.text);
  const lines = L.text.split('\n');

  await check(`code action "Link to related section" on a paragraph links to ${L.actionWants}, and F12 follows it`, async () => {
    // the draft is new on disk: let the server index it (file watcher) before asking
    await waitFor('the server to index the draft', async () => {
      const st = await selfTest({});
      return st.status && st.status.updates_done > 0 && st.status.updates_pending === 0 && st.status.state === 'ready';
    }, 30000, 500);
    await openFile(rel);
    await gotoLine(L.line + 1, lines[L.line].length + 1);
    const row = page.locator('.action-widget .monaco-list-row', { hasText: 'Link to related section' }).first();
    let titles = [];
    for (let attempt = 0; ; attempt++) { // Ctrl+. ("Quick Fix..."), as a person would, again if need be
      await page.keyboard.press('Control+.');
      try {
        await row.waitFor({ state: 'visible', timeout: 10000 });
        break;
      } catch (e) {
        if (attempt >= 2) throw e;
        await page.keyboard.press('Escape');
      }
    }
    await sleep(400); // the menu's fade-in, for the picture
    titles = await page.evaluate(() => [...document.querySelectorAll('.action-widget .monaco-list-row')]
      .map((r) => r.textContent.trim()).filter((t) => t.startsWith('Link to related section')));
    await shot('link-action-menu');
    await widgetShot('.action-widget', 'readme-link-action.png');
    const idx = titles.findIndex((t) => t.includes(L.actionWants));
    if (idx < 0) throw new Error(`no action links to ${L.actionWants}: ${JSON.stringify(titles)}`);
    for (let i = 0; i < idx; i++) await page.keyboard.press('ArrowDown');
    await sleep(150);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+S');
    const saved = await waitFor('the link in the saved draft', () => {
      const t = fs.readFileSync(abs, 'utf8').split('\n')[L.line];
      return linkOn(t, path.basename(L.actionWants)) ? t : null;
    }, 10000);
    await shot('link-action-applied');
    const link = linkOn(saved, path.basename(L.actionWants));
    const [dest, anchor] = link.dest.split('#');
    const target = path.resolve(path.dirname(abs), decodeURIComponent(dest));
    if (target !== path.join(ws, L.actionWants)) throw new Error(`link points at ${target}`);
    const wantLine = headingLineOfSlug(target, anchor);
    const where = await followLink(rel, L.line, link.col + 1, target, wantLine);
    await shot('link-action-followed');
    return `${titles.length} actions; inserted [${link.text}](${link.dest}); F12 → ${where}`;
  });

  await check('completion after "](" offers sections by meaning; the accepted one resolves with F12', async () => {
    await openFile(rel);
    const last = L.line + 1;
    await gotoLine(last + 1, 1);
    await page.keyboard.press('End');
    await page.keyboard.type(' See [the steps](', { delay: 30 });
    const rows = '.suggest-widget.visible .monaco-list-row';
    const ours = await waitFor('mdseek section suggestions', async () => {
      const r = await page.evaluate((sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent.replace(/\s+/g, ' ').trim()), rows);
      return r.some((t) => t.includes('handbook/')) ? r : null;
    }, 30000); // opened by the extension when '](' is typed (VS Code alone would not)
    await sleep(400);
    await shot('link-completion');
    await widgetShot('.suggest-widget.visible', 'readme-link-completion.png');
    const idx = ours.findIndex((t) => t.includes('handbook/'));
    await page.locator(rows).nth(idx).click(); // a click accepts a suggestion
    await page.keyboard.press('Control+S');
    const saved = await waitFor('the completed link in the saved draft', () => {
      const t = fs.readFileSync(abs, 'utf8').split('\n')[last];
      const l = linkOn(t || '', '#');
      return l && l.text === 'the steps' ? t : null;
    }, 10000);
    const link = linkOn(saved, '#');
    const [dest, anchor] = link.dest.split('#');
    const target = path.resolve(path.dirname(abs), decodeURIComponent(dest));
    const wantLine = headingLineOfSlug(target, anchor);
    const where = await followLink(rel, last, link.col + 1, target, wantLine);
    await shot('link-completion-followed');
    return `offered ${JSON.stringify(ours.slice(0, 4))}; accepted "${ours[idx]}" → [${link.text}](${link.dest}); F12 → ${where}`;
  });
}

// ------------------------------------------------------------------ main
async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  for (const f of fs.readdirSync(OUT)) if (f.endsWith('.png') || f.endsWith('.log') || f.endsWith('.json')) fs.rmSync(path.join(OUT, f));
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'mdseek-e2e-'));
  log(`spec ${SPEC_PATH}; workspace source ${SRC_WS}; server ${JSON.stringify(SERVER_CMD)}; out ${OUT}`);

  const codeServer = process.env.MDSEEK_CODE_SERVER || path.join(CACHE, 'code-server', 'node_modules', '.bin', 'code-server');
  if (!fs.existsSync(codeServer)) fatal(`code-server not found at ${codeServer}: run scripts/install-e2e-deps.sh`);
  const pwDir = process.env.MDSEEK_PLAYWRIGHT_DIR || path.join(CACHE, 'playwright');
  let chromium;
  try {
    ({ chromium } = createRequire(path.join(pwDir, 'package.json'))('playwright-core'));
  } catch (e) {
    fatal(`playwright-core not found under ${pwDir}: run scripts/install-e2e-deps.sh (${e.message})`);
  }
  const chromiumBin = process.env.MDSEEK_CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(chromiumBin)) fatal(`${chromiumBin} not found: run scripts/install-e2e-deps.sh`);
  if (!fs.existsSync(SRC_WS)) fatal(`workspace ${SRC_WS} does not exist`);
  {
    const probe = spawnSync(SERVER_CMD[0], [...SERVER_CMD.slice(1), '--help'], { encoding: 'utf8', timeout: 60000 });
    if (probe.status !== 0) {
      fatal(`the server command ${JSON.stringify(SERVER_CMD)} does not work (--help exited ${probe.status ?? probe.error}): ${(probe.stderr || '').slice(-500)} — set MDSEEK_PYTHON to a python with mdseek installed`);
    }
  }

  // ---- build + install the extension
  let vsix = process.env.MDSEEK_E2E_VSIX;
  await check('package the extension (vsce)', async () => {
    if (vsix) return `using ${vsix}`;
    run('npm', ['run', '--silent', 'package'], { cwd: CLIENT_DIR });
    vsix = path.join(CLIENT_DIR, 'build', 'mdseek.vsix');
    if (!fs.existsSync(vsix)) throw new Error(`${vsix} was not produced`);
    return `${vsix} (${Math.round(fs.statSync(vsix).size / 1024)} KiB)`;
  }) || fatal('cannot continue without a .vsix');

  const userData = path.join(tmpRoot, 'user-data');
  const extDir = path.join(tmpRoot, 'extensions');
  await check('install the .vsix into a fresh code-server', async () => {
    const outp = run(codeServer, ['--user-data-dir', userData, '--extensions-dir', extDir, '--install-extension', vsix]);
    const dirs = fs.readdirSync(extDir).filter((d) => d.startsWith('mdseek.mdseek'));
    if (!dirs.length) throw new Error(`extension dir not created: ${outp}`);
    return dirs.join(', ');
  }) || fatal('cannot continue without the extension installed');

  // ---- workspace copy
  const ws = path.join(tmpRoot, 'workspace');
  fs.cpSync(SRC_WS, ws, { recursive: true, filter: (src) => !/[\\/](\.mdseek|\.git)([\\/]|$)/.test(src) });
  // the rename fixture (every link form, folders, a name with a space) beside the handbook
  if (spec.rename) fs.cpSync(path.resolve(path.dirname(SPEC_PATH), spec.rename.fixture), ws, { recursive: true });
  // A cloned repository's own settings try to choose the program VS Code runs and
  // its environment: both are user-settings-only, so neither may take effect.
  const plantedMarker = path.join(tmpRoot, 'workspace-settings-ran-a-program');
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({
    'mdseek.server.command': [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(plantedMarker)}, 'ran')`],
    'mdseek.server.env': { MDSEEK_CACHE_DIR: path.join(ws, 'planted-cache') },
  }, null, 2));

  // ---- settings: start with a command that does not exist (asserts the
  // error message), then switch to the real server (asserts restart-on-change)
  const settingsFile = path.join(userData, 'User', 'settings.json');
  const baseSettings = {
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'window.restoreWindows': 'none',
    'files.autoSave': 'off',
    'editor.hover.delay': 300,
    'editor.minimap.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.commandCenter.enabled': false,
    'git.enabled': false,
    // so that the test can type JSON into settings.json verbatim
    'editor.autoClosingBrackets': 'never',
    'editor.autoClosingQuotes': 'never',
    'editor.autoClosingOvertype': 'never',
    'editor.autoSurround': 'never',
    'editor.autoIndent': 'none',
    'editor.formatOnType': false,
    'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
    'editor.suggestOnTriggerCharacters': false,
    'editor.acceptSuggestionOnEnter': 'off',
    'editor.wordBasedSuggestions': 'off',
    'editor.parameterHints.enabled': false,
    'editor.inlineSuggest.enabled': false,
    'json.schemaDownload.enable': false,
  };
  const writeSettings = (serverCommand, extra = {}) => {
    fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
    fs.writeFileSync(settingsFile, JSON.stringify({ ...baseSettings, ...extra, 'mdseek.server.command': serverCommand }, null, 2));
  };
  /** Replaces the user settings by typing into settings.json and saving, as a
   * user does (code-server does not pick up a file written behind its back). */
  const editSettingsInUI = async (settings) => {
    await runCommand('Preferences: Open User Settings (JSON)');
    await waitFor('settings.json editor', async () => ((await activeTabLabel()) || '').includes('settings.json'), 10000);
    const ed = page.locator('.editor-group-container.active .monaco-editor textarea').first();
    await ed.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify(settings, null, 2));
    await shot('settings-edited');
    await page.keyboard.press('Control+S');
    await waitFor('settings.json saved', () => {
      try { return JSON.stringify(JSON.parse(fs.readFileSync(settingsFile, 'utf8'))) === JSON.stringify(settings); } catch { return false; }
    }, 10000);
    await runCommand('View: Close All Editors');
  };
  const MISSING = path.join(tmpRoot, 'no-such-dir', 'mdseek-missing');
  writeSettings([MISSING, 'serve']);
  // hidden self-test command bound to an unusual chord; args come from a file
  fs.writeFileSync(path.join(userData, 'User', 'keybindings.json'), JSON.stringify([
    { key: 'ctrl+alt+shift+f12', command: 'mdseek.selfTest', args: { argsFile: path.join(tmpRoot, 'selftest-args.json') } },
  ], null, 2));

  // ---- code-server
  const port = await freePort();
  const csConfig = path.join(tmpRoot, 'code-server.yaml');
  fs.writeFileSync(csConfig, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const csLog = fs.openSync(path.join(OUT, 'code-server.log'), 'w');
  csProc = spawn(codeServer, ['--config', csConfig, '--user-data-dir', userData, '--extensions-dir', extDir,
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', ws], {
    detached: true, // own process group (setsid): killed as a whole in cleanup()
    stdio: ['ignore', csLog, csLog],
    // the index (and any other mdseek cache) in the run's temp dir, never the user's cache
    // (the indexes' folder is the platform's cache dir: XDG_CACHE_HOME; the model
    // is looked up where it always is)
    env: {
      ...process.env,
      MDSEEK_E2E: '1',
      MDSEEK_CACHE_DIR: path.join(tmpRoot, 'cache', 'mdseek'),
      XDG_CACHE_HOME: path.join(tmpRoot, 'cache'),
      HF_HOME: process.env.HF_HOME || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'huggingface'),
    },
  });
  csProc.on('exit', (code, sig) => { if (!csProc.__killed) log(`code-server exited early (${code ?? sig}); see ${OUT}/code-server.log`); });

  await check(`code-server answers /healthz on 127.0.0.1:${port}`, () => waitFor('/healthz', async () => {
    if (csProc.exitCode !== null) throw new Error('code-server exited');
    const r = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
    return r && r.ok;
  }, 60000)) || fatal('code-server did not start');

  // ---- browser
  browser = await chromium.launch({
    executablePath: chromiumBin,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  const consoleLog = fs.createWriteStream(path.join(OUT, 'browser-console.log'));
  page.on('console', (m) => consoleLog.write(`[${m.type()}] ${m.text()}\n`));

  await check('workbench loads', async () => {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`, { waitUntil: 'domcontentloaded', timeout: 60000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60000 });
    await page.locator('.statusbar').waitFor({ state: 'visible', timeout: 60000 });
    // the explorer lists the workspace's files: the workbench has drawn
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ state: 'visible', timeout: 60000 });
    await shot('workbench');
  }) || fatal('workbench did not load');

  // ---- 1. missing server command → clear error naming the command and the fix
  await check('missing server command shows a clear error', async () => {
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'could not start the language server' }).first();
    await toast.waitFor({ state: 'visible', timeout: 60000 });
    const text = (await toast.innerText()).replace(/\s+/g, ' ');
    await shot('missing-server-error');
    for (const needle of [MISSING, 'not on PyPI', 'torch==2.13.0', 'mdseek.server.command']) {
      if (!text.includes(needle)) throw new Error(`error toast lacks "${needle}": ${text}`);
    }
    const label = await mdseekStatusLabel();
    if (label !== 'mdseek: server not running') throw new Error(`status bar says ${label}`);
    return text.slice(0, 160);
  });
  // dismiss notifications
  await page.evaluate(() => document.querySelectorAll('.notifications-toasts .codicon-notifications-clear, .notifications-toasts .codicon-close').forEach((b) => b.click())).catch(() => {});

  // ---- 1b. a server whose include globs match no file (own scratch index, so
  // the real one is untouched): the picker's empty state, with the server's note
  let scratchPids = [];
  if (spec.emptyState !== false) {
    await check('no indexed file: the picker shows its empty state', async () => {
      const starts = (await selfTest({})).clientStarts;
      await editSettingsInUI({
        ...baseSettings,
        'mdseek.server.command': SERVER_CMD,
        'mdseek.include': ['**/*.no-such-extension'],
        'mdseek.indexPath': path.join(tmpRoot, 'scratch-index', 'index.sqlite'),
      });
      await waitFor('the client restarted for the new settings', async () => (await selfTest({})).clientStarts > starts, 60000, 200);
      await waitFor('status bar "mdseek: ready"', async () => (await mdseekStatusLabel()) === 'mdseek: ready', READY_TIMEOUT, 200);
      scratchPids = serverPids();
      const query = 'what do I do when the main database machine dies';
      await runCommand('mdseek: Search sections');
      await page.locator('.quick-input-widget input.input').waitFor({ state: 'visible', timeout: 10000 });
      await page.keyboard.type(query, { delay: 5 });
      const answer = await waitForPickerAnswer(query);
      const rows = await quickPickRows();
      await shot('empty-state');
      await clipQuickInput('readme-empty-state.png');
      await closeQuickInput();
      if (answer.rows !== 0 || !rows.length || !rows[0].label.includes('Nothing close in meaning — try other words')) {
        throw new Error(`expected the empty-state row, got ${JSON.stringify(rows)}`);
      }
      // the server's note, whole: one row per line, no "…", nothing cut off on screen
      const shown = rows.slice(1).map((r) => r.label).join(' ').replace(/\s+/g, ' ').trim();
      if (answer.note && shown !== answer.note.replace(/\s+/g, ' ').trim()) throw new Error(`the rows do not show the server's note "${answer.note}" whole: ${JSON.stringify(rows)}`);
      if (rows.some((r) => r.label.includes('…'))) throw new Error(`a row is cut: ${JSON.stringify(rows)}`);
      const cut = await page.evaluate(() => [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row .monaco-icon-label-container')]
        .filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
      if (cut.length) throw new Error(`rows wider than the picker (cut with an ellipsis): ${JSON.stringify(cut)}`);
      return `rows ${JSON.stringify(rows.map((r) => r.label))}`;
    });
  }

  // ---- 2. switch to the real server through the settings editor (the way a
  // user fixes it): the extension must restart the client on the change
  await check('set mdseek.server.command in settings.json (UI) and save', async () => {
    const starts = (await selfTest({})).clientStarts;
    await editSettingsInUI({ ...baseSettings, 'mdseek.server.command': SERVER_CMD });
    // the status bar may still show the previous server's state: wait for the restart itself
    await waitFor('the client restarted for the new settings', async () => (await selfTest({})).clientStarts > starts, 60000, 100);
  });
  if (scratchPids.length) {
    await waitFor('a new server process for the new settings', () => serverPids().some((p) => !scratchPids.includes(p)), 60000, 100);
  }
  let sawIndexing = false;
  const seen = new Set();
  // while the index is being built: the picker must say it only has keyword results
  if (spec.duringIndexing) {
    const d = spec.duringIndexing;
    const first = await waitFor('status bar leaving "starting"', async () => {
      const l = await mdseekStatusLabel();
      if (l && !seen.has(l)) { seen.add(l); log(`  status bar: ${l}`); }
      return l && l !== 'mdseek: starting' && (l !== 'mdseek: server not running' || seen.size > 2) ? l : null;
    }, 60000, 100).catch(() => null);
    if (first === 'mdseek: indexing') {
      sawIndexing = true;
      await shot('indexing');
      await check('while indexing, one progress item in the status bar, in plain words', async () => {
        const samples = [];
        for (let i = 0; i < 12 && (await mdseekStatusLabel()) === 'mdseek: indexing'; i++) {
          samples.push(await progressItems());
          await sleep(250);
        }
        if (!samples.length) return 'indexing ended before the first look';
        const many = samples.find((x) => x.length > 1);
        if (many) throw new Error(`two progress items at once: ${JSON.stringify(many)}`);
        const jargon = samples.flat().find((t) => /chunks|passages|embedded|texts|window fit/i.test(t));
        if (jargon) throw new Error(`the progress speaks of internals: ${jargon}`);
        return `${samples.length} looks: ${[...new Set(samples.flat())].slice(0, 4).join(' | ')}`;
      });
      let stillIndexing = false;
      await check(`while indexing, "${d.query}" lists "${d.heading}" and the title says semantic search is loading`, async () => {
        const { title } = await searchInQuickPick(d.query, d.heading, { timeoutMs: 20000 });
        await shot('search-while-indexing');
        stillIndexing = (await mdseekStatusLabel()) === 'mdseek: indexing';
        await closeQuickInput();
        if (!title.includes('semantic search is still loading')) {
          if (stillIndexing) throw new Error(`QuickPick title is "${title}" although the server is still indexing`);
          return `indexing finished before the answer (title "${title}")`;
        }
        return `title: "${title}"`;
      });
    } else {
      log(`  (no indexing phase seen: ${first}; skipping the while-indexing search)`);
    }
  }
  await check('status bar shows mdseek ready after the setting change', async () => {
    await waitFor('status bar "mdseek: ready"', async () => {
      const l = await mdseekStatusLabel();
      if (l && !seen.has(l)) {
        seen.add(l);
        log(`  status bar: ${l}`);
        if (l === 'mdseek: indexing') { sawIndexing = true; await shot('indexing'); }
      }
      if (l === 'mdseek: server not running' && [...seen].some((s) => s !== 'mdseek: server not running')) return 'stopped';
      return l === 'mdseek: ready' || l === 'mdseek: lexical only';
    }, READY_TIMEOUT, 200);
    if ((await mdseekStatusLabel()) === 'mdseek: server not running') {
      await shot('server-stopped');
      collectLogs();
      const tail = fs.existsSync(path.join(OUT, 'mdseek-output.log')) ? fs.readFileSync(path.join(OUT, 'mdseek-output.log'), 'utf8').slice(-1500) : '';
      throw new Error(`the server stopped (status bar "server not running"); mdseek output tail:\n${tail}`);
    }
    const label = await mdseekStatusLabel();
    await shot('ready');
    if (label !== 'mdseek: ready') throw new Error(`status bar says ${label}`);
    return `sequence: ${[...seen].join(' → ')}`;
  }) || fatal('the server never became ready');

  const st0 = await selfTest({});
  log(`  status: ${JSON.stringify(st0.status)}`);
  await check('self-test reports status from the server', async () => {
    if (!st0.ok || !st0.status || st0.status.error) throw new Error(JSON.stringify(st0));
    if (!(st0.status.files > 0 && st0.status.chunks > 0)) throw new Error(`empty index: ${JSON.stringify(st0.status)}`);
    const io = st0.initializationOptions || {};
    for (const k of ['model', 'indexPath', 'include', 'exclude', 'maxFileSize', 'searchLimit', 'hoverRelated']) {
      if (!(k in io)) throw new Error(`initializationOptions lack ${k}: ${JSON.stringify(io)}`);
    }
    if ('server' in io) throw new Error(`initializationOptions must not carry server.*: ${JSON.stringify(io)}`);
    if (io.documentSymbols !== false) throw new Error(`documentSymbols should be off beside VS Code's markdown outline: ${JSON.stringify(io)}`);
    return `state ${st0.status.state}, ${st0.status.files} files, ${st0.status.chunks} chunks, window fit ${st0.status.window_fit}, indexing seen: ${sawIndexing}`;
  });

  // ---- 3. status bar click → showStatus notification
  await check('clicking the status bar shows the index status', async () => {
    await page.locator('.statusbar-item', { has: page.locator('[aria-label="mdseek: ready"]') }).first().click()
      .catch(() => page.locator('.statusbar [aria-label="mdseek: ready"]').first().click());
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'sections' }).first();
    await toast.waitFor({ state: 'visible', timeout: 10000 });
    const text = (await toast.innerText()).replace(/\s+/g, ' ');
    await shot('status-message');
    // words a user knows: the state, files and sections; no internals
    for (const needle of ['mdseek: ready', `${st0.status.files} files`, `${st0.status.chunks} sections`]) {
      if (!text.includes(needle)) throw new Error(`status message lacks "${needle}": ${text}`);
    }
    for (const internal of ['window fit', 'pending', 'embeds', 'model', st0.status.model]) {
      if (internal && text.includes(internal)) throw new Error(`status message says "${internal}": ${text}`);
    }
    await page.keyboard.press('Escape');
    return text.slice(0, 160);
  });
  await page.evaluate(() => document.querySelectorAll('.notifications-toasts .codicon-notifications-clear, .notifications-toasts .codicon-close').forEach((b) => b.click())).catch(() => {});

  // ---- 4. semantic search through the real QuickPick → Enter → editor at heading
  for (const [i, c] of (spec.search || []).entries()) {
    const name = `search ${i + 1}: "${c.query}" → ${c.path} # ${c.heading}`;
    await check(name, async () => {
      const expectedLine = headingLineOf(path.join(ws, c.path), c.heading);
      const { rows, idx, title } = await searchInQuickPick(c.query, c.heading, { timeoutMs: 20000, viaKey: i === 1 });
      const folder = path.posix.dirname(c.path);
      if (!rows[idx].description.includes(`${folder}/${path.basename(c.path)}`)) throw new Error(`row lacks the folder and file: ${JSON.stringify(rows[idx])}`);
      // typing previewed nothing (the first row of each answer is VS Code's focus, not the user's)
      const typed = (await selfTest({}, { keepPicker: true })).picker;
      if (typed.previews.length) throw new Error(`previews while typing: ${JSON.stringify(typed.previews)}`);
      // moving the selection previews the section in the editor, the picker keeps the focus
      await focusRow(idx);
      await waitFor(`preview of ${path.basename(c.path)} behind the picker`, async () =>
        ((await activeTabLabel()) || '').includes(path.basename(c.path)) && (await quickInputVisible()), 10000, 100);
      if (i === 0 && rows.length > 4) {
        // arrowing quickly: previews passed over are dropped, the focused row's is shown
        const before = (await selfTest({}, { keepPicker: true })).picker.previews.length;
        for (let k = 0; k < 3; k++) await page.keyboard.press(idx + 3 < rows.length ? 'ArrowDown' : 'ArrowUp');
        for (let k = 0; k < 3; k++) await page.keyboard.press(idx + 3 < rows.length ? 'ArrowUp' : 'ArrowDown');
        const seen = await waitFor('the focused row previewed last', async () => {
          const p = (await selfTest({}, { keepPicker: true })).picker.previews;
          return p.length > before && p[p.length - 1] === rows[idx].label && (await activeTabLabel() || '').includes(path.basename(c.path)) ? p : null;
        }, 10000, 100);
        if (seen.length - before >= 6) throw new Error(`every row passed over was previewed: ${JSON.stringify(seen.slice(before))}`);
      }
      await shot(`search-${i + 1}-results`);
      if (i === 0) await page.screenshot({ path: path.join(OUT, 'readme-search.png') });
      if (c.maxRank && idx + 1 > c.maxRank) throw new Error(`"${c.heading}" is listed at #${idx + 1} (> ${c.maxRank}): ${JSON.stringify(rows.map((r) => r.label))}`);
      const row = rows[idx];
      if (c.breadcrumbIncludes && !row.description.includes(c.breadcrumbIncludes)) throw new Error(`breadcrumb "${row.description}" lacks "${c.breadcrumbIncludes}"`);
      await acceptRow(idx);
      await waitFor(`editor ${path.basename(c.path)}`, async () => ((await activeTabLabel()) || '').includes(path.basename(c.path)), 10000);
      const cur = await waitFor('cursor on the heading line', async () => {
        const k = await editorCursor();
        return k && k.line === expectedLine + 1 ? k : null;
      }, 5000).catch(async () => { throw new Error(`cursor is at ${JSON.stringify(await editorCursor())}, expected Ln ${expectedLine + 1}`); });
      await sleep(300);
      await shot(`search-${i + 1}-opened`);
      const st = await selfTest({ query: c.query, explain: true });
      const ae = st.activeEditor;
      if (!ae || !ae.path.endsWith(path.sep + c.path)) throw new Error(`active editor is ${ae && ae.path}, expected …/${c.path}`);
      if (ae.line !== expectedLine) throw new Error(`self-test cursor line ${ae.line}, expected ${expectedLine}`);
      // revealed at the top (sticky scroll keeps a few parent headings above it)
      if (ae.visibleStart !== null && expectedLine > 8 && (expectedLine < ae.visibleStart || expectedLine - ae.visibleStart > 8)) {
        throw new Error(`heading not revealed at top: first visible line ${ae.visibleStart}, heading ${expectedLine}`);
      }
      const hits = (st.search && st.search.results) || [];
      const srvIdx = hits.findIndex((h) => h.heading === c.heading && h.path.replace(/\\/g, '/').endsWith(c.path));
      if (srvIdx < 0) throw new Error(`mdseek/search (self-test) does not return ${c.path} # ${c.heading}: ${JSON.stringify(hits.map((h) => `${h.path}#${h.heading}`))}`);
      // the row's snippet comes from the passage that matched (when meaning found it through one)
      const found = hits[srvIdx];
      let passageNote = 'no passage';
      const dp = found.explain && found.explain.dense_passage;
      if (dp) {
        const plain = (t) => t.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
        const srcLines = fs.readFileSync(path.join(ws, c.path), 'utf8').split('\n');
        const passage = plain(srcLines.slice(dp.lines[0] - 1, dp.lines[1]).join(' '));
        const words = plain(found.snippet.replace(/^… /, '').replace(/ …$/, '')).split(' ').slice(0, 4).join(' ');
        if (!passage.includes(words)) throw new Error(`the snippet "${found.snippet}" is not from the matched passage (lines ${dp.lines.join('-')}): ${passage.slice(0, 200)}`);
        const head = found.snippet.slice(0, 24);
        if (!(rows[idx].detail + rows[idx].aria).includes(head)) throw new Error(`the row's snippet is not the server's "${head}…": ${JSON.stringify(rows[idx])}`);
        passageNote = `snippet from the matched passage, lines ${dp.lines.join('-')}`;
      }
      const ui = rows.map((r) => r.label);
      const srv = hits.slice(0, ui.length).map((h) => h.heading);
      const orderNote = JSON.stringify(ui) === JSON.stringify(srv) ? 'UI order = server order' : `UI order differs from server order: ui=${JSON.stringify(ui.slice(0, 5))} server=${JSON.stringify(srv.slice(0, 5))}`;
      return `UI rank #${idx + 1}, server rank #${srvIdx + 1} (mode ${st.search.mode}); ${passageNote}; ${cur.text}; ${orderNote}${title.includes('keyword') ? '; title: ' + title : ''}`;
    });
    await closeQuickInput();
  }

  // ---- 4a. a question nothing answers: the server's note first, whole; the nearest sections below
  if (spec.noMatch) {
    const q = spec.noMatch.query;
    await check(`a question nothing answers shows the server's note whole above the nearest sections`, async () => {
      await runCommand('mdseek: Search sections');
      await page.locator('.quick-input-widget input.input').waitFor({ state: 'visible', timeout: 10000 });
      await page.keyboard.type(q, { delay: 5 });
      const answer = await waitForPickerAnswer(q);
      if (!answer.note || !answer.note.includes(spec.noMatch.noteIncludes)) throw new Error(`the server's note is ${JSON.stringify(answer.note)}`);
      if (!answer.rows) throw new Error('no nearest sections listed');
      const rows = await waitFor('the note rows above the sections', async () => {
        const r = await quickPickRows();
        return r.length && !r[0].description && r.some((x) => x.description) ? r : null;
      }, 10000, 100);
      const noteRows = rows.slice(0, rows.findIndex((r) => r.description));
      const shown = noteRows.map((r) => r.label).join(' ').replace(/\s+/g, ' ').trim();
      if (shown !== answer.note.replace(/\s+/g, ' ').trim()) throw new Error(`the note is not shown whole on top: ${JSON.stringify(rows.slice(0, 4))}`);
      const focused = rows.find((r) => r.focused);
      if (!focused || !focused.description) throw new Error(`the focus is not on the first section: ${JSON.stringify(focused)}`);
      const typed = (await selfTest({}, { keepPicker: true })).picker;
      if (typed.previews.length) throw new Error(`previews while typing: ${JSON.stringify(typed.previews)}`);
      await clipQuickInput('readme-no-match.png');
      await closeQuickInput();
      return `note rows ${JSON.stringify(noteRows.map((r) => r.label))}; focused "${focused.label}"`;
    });
  }

  // ---- 4b. Escape puts the editor back as it was (the peeked file's tab closes)
  if ((spec.search || []).length >= 2 && spec.hover && spec.hover.length) {
    const home = spec.hover[0].path;
    const c = spec.search[1];
    await check(`Escape in the picker restores ${path.basename(home)} after previewing ${path.basename(c.path)}`, async () => {
      await runCommand('View: Close All Editors');
      await openFile(home);
      await gotoLine(spec.hover[0].line + 1, 1);
      const { idx } = await searchInQuickPick(c.query, c.heading, { timeoutMs: 20000 });
      const typed = (await selfTest({}, { keepPicker: true })).picker;
      if (typed.previews.length || !((await activeTabLabel()) || '').includes(path.basename(home))) {
        throw new Error(`typing previewed ${JSON.stringify(typed.previews)}; active tab ${await activeTabLabel()}`);
      }
      const explorer = await page.evaluate(() => document.querySelectorAll('.explorer-folders-view .monaco-list-row[aria-expanded="true"]').length);
      await focusRow(idx);
      await waitFor('the preview tab', async () => ((await activeTabLabel()) || '').includes(path.basename(c.path)), 10000, 100);
      await page.keyboard.press('Escape');
      await waitFor(`${path.basename(home)} active again`, async () => ((await activeTabLabel()) || '').includes(path.basename(home)), 10000, 100);
      const cur = await waitFor('cursor back on its line', async () => {
        const k = await editorCursor();
        return k && k.line === spec.hover[0].line + 1 ? k : null;
      }, 5000, 100);
      const tabsNow = () => page.evaluate(() => [...document.querySelectorAll('.tab')].map((t) => t.getAttribute('aria-label') || t.textContent || ''));
      const tabs = await waitFor("the previewed file's tab closed", async () => {
        const t = await tabsNow();
        return t.some((x) => x.includes(path.basename(c.path))) ? null : t;
      }, 5000, 100).catch(async () => { throw new Error(`the previewed file's tab stayed open: ${JSON.stringify(await tabsNow())}`); });
      const explorerAfter = await page.evaluate(() => document.querySelectorAll('.explorer-folders-view .monaco-list-row[aria-expanded="true"]').length);
      return `no preview while typing; ${cur.text}; tabs ${JSON.stringify(tabs.map((t) => t.split(',')[0]))}; expanded Explorer folders ${explorer} → ${explorerAfter}`;
    });
  }

  // ---- 4c. hover on a heading lists related sections (picture for the README)
  if (spec.relatedHover) {
    const r = spec.relatedHover;
    await check(`hover on the heading "${r.heading}" lists related sections`, async () => {
      const line = headingLineOf(path.join(ws, r.path), r.heading);
      await openFile(r.path);
      await gotoLine(line + 1, 4);
      // A hover shown can close as it is read (seen once: visible, then hidden
      // before innerText, while the editor refreshed): show it again, 3 tries.
      let text = null;
      for (let attempt = 1; text === null; attempt++) {
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'Related sections' }).first();
        try {
          await hover.waitFor({ state: 'visible', timeout: 15000 });
          text = (await hover.innerText({ timeout: 5000 })).replace(/\s+/g, ' ');
        } catch (e) {
          if (attempt >= 3) throw e;
          log(`hover closed before it was read (try ${attempt}): showing it again`);
        }
      }
      if (r.related && !text.includes(r.related)) throw new Error(`"${r.related}" not among the related sections: ${text.slice(0, 400)}`);
      await page.waitForFunction(() => {
        const h = document.querySelector('.monaco-hover:not(.hidden)');
        return h && getComputedStyle(h).opacity === '1';
      }, undefined, { timeout: 5000 }).catch(() => {});
      await page.screenshot({ path: path.join(OUT, 'readme-related-hover.png') });
      await page.keyboard.press('Escape');
      return text.slice(0, 160);
    });
  }

  // ---- 4d. broken links of files never opened are reported; the quick fix works
  if (spec.brokenLink) {
    const b = spec.brokenLink;
    await check(`a broken anchor in the never-opened ${path.basename(b.path)} is reported and quick-fixed`, async () => {
      const fileUri = pathToFileURL(path.join(ws, b.path)).toString();
      const st = await waitFor('the diagnostic of the unopened file', async () => {
        const r = await selfTest({ diagnostics: true });
        return (r.diagnostics || []).some((d) => decodeURIComponent(d.uri) === decodeURIComponent(fileUri) && d.line === b.line) ? r : null;
      }, 60000, 500);
      const files = new Set(st.diagnostics.map((d) => d.uri.split('/').pop()));
      await openFile(b.path);
      const col = linkCharacter(path.join(ws, b.path), b.line, null);
      await gotoLine(b.line + 1, col + 1);
      await page.keyboard.press('Control+.');
      const fix = page.locator('.action-widget .monaco-list-row', { hasText: b.fixHeading || b.fixTo }).first(); // fixes are named by heading text
      await fix.waitFor({ state: 'visible', timeout: 15000 });
      await shot('quick-fix');
      await page.screenshot({ path: path.join(OUT, 'readme-quick-fix.png') });
      // the preferred fix is listed first and focused: Enter applies it
      const first = await page.evaluate(() => document.querySelector('.action-widget .monaco-list-row.focused')?.textContent || '');
      if (!first.includes(b.fixHeading || b.fixTo)) throw new Error(`the focused quick fix is "${first}", not the nearest heading ${b.fixHeading || b.fixTo}`);
      await page.keyboard.press('Enter');
      const after = await waitFor('the fixed link in the editor', async () => {
        const r = await selfTest({ diagnostics: true });
        return r.activeEditor && r.activeEditor.lineText.includes(`#${b.fixTo})`) ? r : null;
      }, 10000, 200);
      await waitFor('the diagnostic gone', async () => {
        const r = await selfTest({ diagnostics: true });
        return !(r.diagnostics || []).some((d) => decodeURIComponent(d.uri) === decodeURIComponent(fileUri) && d.line === b.line);
      }, 20000, 300);
      await page.keyboard.press('Control+Z'); // leave the workspace as it was
      return `reported in ${[...files].join(', ')}; fixed line: ${after.activeEditor.lineText.trim().slice(0, 100)}`;
    });
  }

  // ---- 5. hover over a link → hover widget shows the target heading
  for (const [i, h] of (spec.hover || []).entries()) {
    if (h.character === undefined) h.character = linkCharacter(path.join(SRC_WS, h.path), h.line, h.target_path);
    await check(`hover ${i + 1}: ${h.path}:${h.line + 1}:${h.character + 1} shows "${h.heading}"`, async () => {
      await openFile(h.path);
      await gotoLine(h.line + 1, h.character + 1);
      await sleep(300);
      // Real UI: keyboard "Show or Focus Hover" (Ctrl+K Ctrl+I) at the cursor…
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: h.heading }).first();
      try {
        await hover.waitFor({ state: 'visible', timeout: 15000 });
      } catch {
        const txt = await page.evaluate(() => [...document.querySelectorAll('.monaco-hover')].map((e) => e.innerText).join(' | '));
        throw new Error(`no hover widget with "${h.heading}"; hover text: ${JSON.stringify(txt.slice(0, 400))}`);
      }
      const text = (await hover.innerText()).replace(/\s+/g, ' ');
      await sleep(600); // let the fade-in finish before the picture
      await shot(`hover-${i + 1}`);
      if (i === 0) await widgetShot('.monaco-hover:not(.hidden)', 'readme-hover.png');
      const fit = await page.evaluate(() => {
        const h = document.querySelector('.monaco-hover:not(.hidden)');
        const box = h && h.querySelector('.monaco-scrollable-element');
        const content = h && h.querySelector('.monaco-hover-content');
        return box && content ? { scrolls: content.scrollHeight > box.clientHeight + 2, links: h.querySelectorAll('a[href], a[data-href]').length } : null;
      });
      const st = await selfTest({ hoverUri: pathToFileURL(path.join(ws, h.path)).toString(), hoverLine: h.line, hoverChar: h.character });
      const apiText = JSON.stringify(st.hover || []);
      if (!apiText.includes(h.heading)) throw new Error(`vscode.executeHoverProvider lacks "${h.heading}": ${apiText.slice(0, 300)}`);
      // a hover never ends inside a fenced block: every block it shows is a whole block of the target
      let blocks = [];
      if (h.target_path) {
        const src = fs.readFileSync(path.join(ws, h.target_path), 'utf8');
        for (const md of (st.hover || []).flat()) {
          blocks = fencedBlocks(md);
          for (const b of blocks) {
            if (!src.includes(b.join('\n')) && !/_…\d+ more lines?_/.test(md)) throw new Error(`the hover cuts a fenced block: ${JSON.stringify(b)}`);
            if (!src.includes(b.slice(0, -1).join('\n'))) throw new Error(`the hover's block is not the target's: ${JSON.stringify(b)}`);
            if (b.length > 2 && b[b.length - 2].trimEnd().endsWith('\\')) throw new Error(`the hover cuts a command mid-way: ${JSON.stringify(b)}`);
          }
        }
      }
      if (h.target_path) {
        const want = pathToFileURL(path.join(ws, h.target_path)).toString();
        const wantLine = headingLineOf(path.join(ws, h.target_path), h.heading);
        const defs = Array.isArray(st.definition) ? st.definition : [];
        if (!defs.some((d) => decodeURIComponent(d.uri) === decodeURIComponent(want) && d.line === wantLine)) {
          throw new Error(`vscode.executeDefinitionProvider does not point at ${h.target_path}:${wantLine}: ${JSON.stringify(st.definition)}`);
        }
      }
      await page.keyboard.press('Escape');
      if (fit && fit.scrolls) throw new Error('the hover needs scrolling');
      return `${text.slice(0, 120)}; ${blocks.length} whole fenced blocks; ${fit ? `fits without scrolling; ${fit.links} link(s)` : 'size not measured'}`;
    });
  }

  // ---- 5b. the reference counts above headings: setting mdseek.codeLens
  if (spec.lenses) {
    const L = spec.lenses;
    const lensesAt = async (want) => {
      await openFile(L.path);
      await gotoLine(headingLineOf(path.join(ws, L.path), L.heading) + 1, 1);
      return waitFor(`lenses (${want})`, async () => {
        const t = await lensTexts();
        return t.length && t.every((x) => /^\d+ references?$/.test(x)) && (want === 'nonzero' ? !t.some((x) => x.startsWith('0 ')) : t.some((x) => x.startsWith('0 '))) ? t : null;
      }, 30000, 250).catch(async () => { throw new Error(`lenses on screen (${want}): ${JSON.stringify(await lensTexts())}`); });
    };
    await check(`code lenses: only headings linked to by default, every one with mdseek.codeLens "all", none with "off"`, async () => {
      const byDefault = await lensesAt('nonzero');
      if (!byDefault.some((x) => x === L.references)) throw new Error(`no "${L.references}" lens above "${L.heading}": ${JSON.stringify(byDefault)}`);
      await shot('lenses-nonzero');
      const starts = (await selfTest({})).clientStarts;
      await editSettingsInUI({ ...baseSettings, 'mdseek.server.command': SERVER_CMD, 'mdseek.codeLens': 'all' });
      const all = await lensesAt('all');
      await shot('lenses-all');
      await editSettingsInUI({ ...baseSettings, 'mdseek.server.command': SERVER_CMD, 'mdseek.codeLens': 'off' });
      await openFile(L.path);
      await gotoLine(headingLineOf(path.join(ws, L.path), L.heading) + 1, 1);
      await waitFor('no lens', async () => (await lensTexts()).length === 0, 15000, 250)
        .catch(async () => { throw new Error(`lenses with "off": ${JSON.stringify(await lensTexts())}`); });
      await editSettingsInUI({ ...baseSettings, 'mdseek.server.command': SERVER_CMD });
      const after = (await selfTest({})).clientStarts;
      if (after !== starts) throw new Error(`the server was restarted for a client setting (${starts} → ${after} starts)`);
      return `default ${JSON.stringify(byDefault)}; "all" ${JSON.stringify(all)}; "off" none; no restart`;
    });
  }

  // ---- 6. edit + Ctrl+S → the new sentence is searchable
  if (spec.edit) {
    const e = spec.edit;
    const sentence = e.sentence.replace('{nonce}', Date.now().toString(36));
    await check(`edit ${e.path} # ${e.heading}, save, find the new sentence`, async () => {
      const hl = headingLineOf(path.join(ws, e.path), e.heading);
      await openFile(e.path);
      await gotoLine(hl + 1, 1);
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      await page.keyboard.type(sentence, { delay: 5 });
      await page.keyboard.press('Enter');
      await shot('edit-typed');
      await page.keyboard.press('Control+S');
      await waitFor('file saved to disk', () => fs.readFileSync(path.join(ws, e.path), 'utf8').includes(sentence), 10000);
      await waitFor('tab not dirty', async () => !(await page.locator('.tab.active.dirty').count()), 5000);
      await shot('edit-saved');
      const query = (e.query || sentence).replace('{nonce}', '');
      const { idx } = await searchInQuickPick(query, e.heading, { timeoutMs: 60000, retype: 12 });
      await shot('edit-found');
      const rows = await quickPickRows();
      const detail = rows[idx].aria + ' ' + rows[idx].detail;
      await closeQuickInput();
      const st = await selfTest({ query });
      const hits = (st.search && st.search.results) || [];
      const hit = hits.find((r) => r.heading === e.heading && r.path.replace(/\\/g, '/').endsWith(e.path));
      if (!hit) throw new Error(`self-test search lacks the edited section: ${JSON.stringify(hits.map((r) => r.heading))}`);
      return `found at UI rank #${idx + 1}; detail: ${detail.slice(0, 100)}`;
    });
  }

  // ---- 7. workspace/symbol through the VS Code API
  if (spec.workspaceSymbol) {
    const w = spec.workspaceSymbol;
    await check(`workspace symbols for "${w.query}" include "${w.heading}"`, async () => {
      const st = await selfTest({ symbolQuery: w.query });
      const syms = st.workspaceSymbols || [];
      if (!Array.isArray(syms) || !syms.some((s) => s.name.includes(w.heading))) throw new Error(`got ${JSON.stringify(syms).slice(0, 300)}`);
      return `${syms.length} symbols`;
    });
  }

  // ---- 7a. Ctrl+T with words no heading holds: one row opens the search picker with them
  if (spec.questionRow) {
    const w = spec.questionRow;
    await check(`Ctrl+T "${w.query}": the row "Search by meaning" opens the search picker holding it`, async () => {
      await closeQuickInput();
      const tabsBefore = await page.evaluate(() => document.querySelectorAll('.tab').length);
      await page.keyboard.press('Control+T');
      const input = page.locator('.quick-input-widget input.input');
      await input.waitFor({ state: 'visible', timeout: 10000 });
      await waitFor('the Ctrl+T picker', async () => (await input.inputValue()).startsWith('#'), 10000, 50);
      await page.keyboard.type(w.query, { delay: 15 });
      const label = `Search by meaning: ${w.query}`;
      const rows = await waitFor(`"${label}" in Ctrl+T`, async () => {
        const r = await quickPickRows();
        return r.some((x) => x.label === label) ? r : null;
      }, 30000, 200).catch(async () => { throw new Error(`Ctrl+T lists ${JSON.stringify((await quickPickRows()).map((r) => r.label))}`); });
      const mine = rows.filter((r) => r.label.startsWith('Search by meaning'));
      if (mine.length !== 1) throw new Error(`expected one "Search by meaning" row: ${JSON.stringify(rows.map((r) => r.label))}`);
      await shot('ctrl-t-question-row');
      await clipQuickInput('readme-ctrl-t.png');
      await acceptRow(rows.find((r) => r.label === label).index);
      await waitFor('the mdseek search picker', async () => (await quickPickTitle()).startsWith('mdseek: Search sections'), 15000, 100);
      const value = await waitFor(`the search picker holding "${w.query}"`, async () => {
        const v = await input.inputValue();
        return v === w.query ? v : null;
      }, 5000, 50).catch(async () => { throw new Error(`the search picker holds "${await input.inputValue()}", not "${w.query}"`); });
      await waitForPickerAnswer(w.query);
      const listed = await quickPickRows();
      if (w.heading && !listed.some((r) => r.label === w.heading)) throw new Error(`"${w.heading}" not listed for "${w.query}": ${JSON.stringify(listed.map((r) => r.label))}`);
      await shot('ctrl-t-question-picker');
      const tabs = await page.evaluate(() => [...document.querySelectorAll('.tab')].map((t) => t.getAttribute('aria-label') || t.textContent || ''));
      if (tabs.some((t) => /mdseek Search sections|mdseek-search/.test(t))) throw new Error(`the row's tab stayed open: ${JSON.stringify(tabs)}`);
      await closeQuickInput();
      // a whole question reaches the providers through the API (Ctrl+T hands them
      // only its first word): the row holds it; the server's row of words
      // ("mdseek: no section matches well …", for Neovim's picker) is not shown
      let api = '';
      if (spec.noMatch) {
        const syms = (await selfTest({ symbolQuery: spec.noMatch.query })).workspaceSymbols || [];
        const names = syms.map((x) => x.name);
        if (names.some((n) => n.startsWith('mdseek: '))) throw new Error(`the server's row of words is listed: ${JSON.stringify(names)}`);
        if (!names.includes(`Search by meaning: ${spec.noMatch.query}`)) throw new Error(`no question row for "${spec.noMatch.query}": ${JSON.stringify(names)}`);
        api = `; the API lists ${names.length} symbols for the question, the row last`;
      }
      // (a question typed in Ctrl+T: VS Code asks the providers for its first word
      // only and keeps the rows whose name holds the rest: noted, not asserted)
      await page.keyboard.press('Control+T');
      await input.waitFor({ state: 'visible', timeout: 10000 });
      await page.keyboard.type(`${w.query} log of the outage`, { delay: 5 });
      await waitFor('Ctrl+T to settle on the typed question', () => page.evaluate((typed) => {
        const box = document.querySelector('.quick-input-widget');
        const value = box?.querySelector('input.input')?.value || '';
        const busy = box?.querySelector('.quick-input-progress.active, .monaco-progress-container.active');
        const drawn = box?.querySelector('.quick-input-list .monaco-list-row, .quick-input-message');
        return value.endsWith(typed) && !busy && !!drawn;
      }, `${w.query} log of the outage`), 15000, 100);
      const typedQuestion = (await quickPickRows()).map((r) => r.label);
      await closeQuickInput();
      return `row ${JSON.stringify(label)} among ${rows.length}; picker holds "${value}" and lists ${JSON.stringify(listed.slice(0, 3).map((r) => r.label))}; tabs ${tabsBefore} → ${tabs.length}${api}; Ctrl+T with "${w.query} log of the outage" lists ${JSON.stringify(typedQuestion)}`;
    });
  }

  // ---- 7b. writing links by meaning: code action + completion, followed with F12
  if (spec.links) await linkByMeaning(ws, spec.links);

  // ---- 7c. rename a heading with F2 and move a file; every link still resolves
  if (spec.rename) await renameAndMove(ws, spec.rename);

  // ---- 8. the server dies: the client restarts it and search works again
  if (spec.crashRestart !== false) {
    await check('a killed server is restarted automatically', async () => {
      const pids = serverPids();
      if (!pids.length) throw new Error('could not find the server process in the code-server process group');
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      await waitFor('the old server process to be gone', () => pids.every((p) => !fs.existsSync(`/proc/${p}`)), 10000);
      const seenAfter = [];
      await waitFor('status bar "mdseek: ready" after the restart', async () => {
        const l = await mdseekStatusLabel();
        if (l && seenAfter[seenAfter.length - 1] !== l) seenAfter.push(l);
        const fresh = serverPids().filter((p) => !pids.includes(p));
        return fresh.length && l === 'mdseek: ready';
      }, READY_TIMEOUT, 200);
      await waitFor('the restarted client to answer', async () => (await selfTest({})).ok, 30000, 200);
      const q = (spec.search && spec.search[0]) || null;
      if (q) {
        const st = await selfTest({ query: q.query });
        const hits = (st.search && st.search.results) || [];
        if (!hits.some((h) => h.heading === q.heading)) throw new Error(`search after the restart lacks "${q.heading}": ${JSON.stringify(st.search ?? st).slice(0, 300)}`);
      }
      await shot('after-restart');
      return `killed ${pids.join(',')}; status: ${seenAfter.join(' → ')}; new server ${serverPids().join(',')}`;
    });
  }

  // ---- 9. the workspace's .vscode/settings.json never chose the server
  await check('a workspace .vscode/settings.json cannot change the server command or env', async () => {
    if (fs.existsSync(plantedMarker)) throw new Error(`the workspace's mdseek.server.command ran: ${plantedMarker} exists`);
    if (fs.existsSync(path.join(ws, 'planted-cache'))) throw new Error("the workspace's mdseek.server.env reached the server");
    const st = await selfTest({});
    if (!st.ok) throw new Error(`the server from the user settings does not answer: ${JSON.stringify(st).slice(0, 200)}`);
    return 'no marker file; the server from the user settings answers';
  });

  // final picture of the last state
  if (spec.finalScreenshot !== false) await shot('final');
}

main().then(() => finish(), (e) => fatal(e && e.stack ? e.stack : String(e)));
