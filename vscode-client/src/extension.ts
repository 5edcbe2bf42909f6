// mdseek VS Code client: starts the mdseek language server (stdio) and adds a
// semantic "Search sections" QuickPick, reindex/status commands and a status
// bar item that follows the server's indexing progress.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';

// ---------------------------------------------------------------- protocol

export interface LspPosition { line: number; character: number }
export interface LspRange { start: LspPosition; end: LspPosition }

export interface SearchResult {
  uri: string;
  path: string;
  heading: string;
  breadcrumb: string;
  range: LspRange;
  start_line: number;
  end_line: number;
  score: number;
  snippet: string;
  lexical_rank: number | null;
  dense_rank: number | null;
}

export interface SearchResponse {
  mode: 'hybrid' | 'lexical';
  note?: string;
  results: SearchResult[];
}

export interface StatusResponse {
  state: 'indexing' | 'ready' | 'lexical-only' | string;
  files: number;
  chunks: number;
  coverage: number;
  model: string;
  pending_embeds: number;
  message?: string;
}

export interface ReindexResponse { files: number; chunks: number }

const SEARCH = 'mdseek/search';
const STATUS = 'mdseek/status';
const REINDEX = 'mdseek/reindex';

const FIX_HINT =
  'pip install mdseek, or set mdseek.server.command to e.g. ["/path/to/venv/bin/python", "-m", "mdseek", "serve"]';

// Settings forwarded to the server as initializationOptions (server.* is the
// client's own business).
const SERVER_SETTINGS = [
  'model',
  'indexPath',
  'include',
  'exclude',
  'maxFileSize',
  'searchLimit',
  'hoverRelated',
] as const;

// ---------------------------------------------------------------- state

let client: LanguageClient | undefined;
let clientReady = false;
let output: vscode.OutputChannel;
let statusItem: vscode.StatusBarItem;
let lastStatus: StatusResponse | undefined;
let lastStartError: string | undefined;
let pollTimer: NodeJS.Timeout | undefined;
const activeProgress = new Set<string>();
let restartChain: Promise<void> = Promise.resolve();
let crashes: number[] = [];

type UiState = 'starting' | 'indexing' | 'ready' | 'lexical-only' | 'error' | 'stopped';

function log(msg: string): void {
  output.appendLine(`[${new Date().toISOString()}] ${msg}`);
}

function serverConfig(): { command: string[]; env: Record<string, string> } {
  const cfg = vscode.workspace.getConfiguration('mdseek');
  let command = cfg.get<unknown>('server.command');
  if (!Array.isArray(command) || command.length === 0 || !command.every((c) => typeof c === 'string')) {
    command = ['mdseek', 'serve'];
  }
  const envRaw = cfg.get<unknown>('server.env') ?? {};
  const env: Record<string, string> = {};
  if (envRaw && typeof envRaw === 'object') {
    for (const [k, v] of Object.entries(envRaw as Record<string, unknown>)) {
      if (v !== undefined && v !== null) env[k] = String(v);
    }
  }
  return { command: command as string[], env };
}

/** The `mdseek` configuration section as a plain object, minus `server.*`. */
export function initializationOptions(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('mdseek');
  let out: Record<string, unknown> = {};
  try {
    out = JSON.parse(JSON.stringify(cfg)) as Record<string, unknown>;
  } catch {
    out = {};
  }
  delete out.server;
  for (const key of SERVER_SETTINGS) if (!(key in out)) out[key] = cfg.get(key);
  return out;
}

/** Returns an error text if `program` obviously cannot be executed. */
function checkExecutable(program: string, env: NodeJS.ProcessEnv): string | undefined {
  const isExec = (p: string): boolean => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/') || program.includes(path.sep)) {
    const abs = path.isAbsolute(program)
      ? program
      : path.resolve(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd(), program);
    return isExec(abs) ? undefined : `${abs} does not exist or is not executable`;
  }
  const dirs = (env.PATH ?? process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const d of dirs) for (const e of exts) if (isExec(path.join(d, program + e))) return undefined;
  return `"${program}" was not found on PATH`;
}

function showStartError(command: string[], reason: string): void {
  const cmd = JSON.stringify(command);
  lastStartError = `mdseek: could not start the language server ${cmd}: ${reason}. Fix: ${FIX_HINT}.`;
  log(lastStartError);
  setUiState('error');
  void vscode.window.showErrorMessage(lastStartError, 'Open Settings', 'Show Output').then((choice) => {
    if (choice === 'Open Settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'mdseek.server.command');
    } else if (choice === 'Show Output') {
      output.show(true);
    }
  });
}

// ---------------------------------------------------------------- client lifecycle

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const { command, env } = serverConfig();
  const mergedEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  lastStartError = undefined;
  lastStatus = undefined;
  crashes = [];
  activeProgress.clear();
  setUiState('starting');

  const problem = checkExecutable(command[0], mergedEnv);
  if (problem) {
    showStartError(command, problem);
    return;
  }

  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const serverOptions: ServerOptions = {
    command: command[0],
    args: command.slice(1),
    transport: TransportKind.stdio,
    options: { env: mergedEnv, cwd },
  };

  let startupFailed = false;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'markdown' }],
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.md'),
    },
    initializationOptions: initializationOptions(),
    outputChannel: output,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        clientReady = false;
        if (startupFailed) return { action: CloseAction.DoNotRestart, handled: true };
        const now = Date.now();
        crashes = crashes.filter((t) => now - t < 3 * 60_000);
        crashes.push(now);
        if (crashes.length <= 3) {
          log(`the server exited unexpectedly; restarting it (${crashes.length}/3 in 3 minutes)`);
          setUiState('starting');
          return { action: CloseAction.Restart, handled: true };
        }
        setUiState('error');
        lastStartError = 'mdseek: the language server crashed 4 times in 3 minutes and will not be restarted. See the mdseek output; change any mdseek setting to start it again.';
        return { action: CloseAction.DoNotRestart, message: lastStartError };
      },
    },
    initializationFailedHandler: (error) => {
      startupFailed = true;
      log(`initialize failed: ${error}`);
      return false;
    },
  };

  const c = new LanguageClient('mdseek', 'mdseek', serverOptions, clientOptions);
  hookProgress(c);
  c.onDidChangeState((e) => {
    if (client !== c) return;
    if (e.newState === State.Running && !startupFailed) {
      // first start, or an automatic restart after a crash
      clientReady = true;
      activeProgress.clear();
      void refreshStatus();
    } else if (e.newState === State.Stopped) {
      clientReady = false;
    }
  });
  client = c;
  log(`starting ${JSON.stringify(command)} (+ --stdio)`);
  try {
    await c.start();
  } catch (err) {
    startupFailed = true;
    if (client === c) client = undefined;
    clientReady = false;
    const reason = err instanceof Error ? err.message : String(err);
    showStartError(command, `${reason} (see the mdseek output for the server's stderr)`);
    try {
      await c.dispose();
    } catch {
      /* already dead */
    }
    return;
  }
  if (client !== c) return; // superseded by a restart meanwhile
  clientReady = true;
  log('server started');
  void refreshStatus();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  clientReady = false;
  stopPolling();
  if (!c) return;
  try {
    await c.stop(5000);
  } catch (err) {
    log(`stop: ${err}`);
  }
  try {
    await c.dispose();
  } catch {
    /* ignore */
  }
}

function restartClient(context: vscode.ExtensionContext): Promise<void> {
  restartChain = restartChain.then(async () => {
    log('mdseek settings changed: restarting the server');
    await stopClient();
    await startClient(context);
  });
  return restartChain;
}

// ---------------------------------------------------------------- progress + status bar

/** Observe $/progress for every work-done token the server creates. The
 * languageclient's ProgressFeature answers window/workDoneProgress/create and
 * subscribes to the token via client.onProgress; we wrap that to also drive
 * the status bar (its own progress UI keeps working). */
function hookProgress(c: LanguageClient): void {
  const original = c.onProgress.bind(c) as LanguageClient['onProgress'];
  (c as { onProgress: LanguageClient['onProgress'] }).onProgress = ((type: unknown, token: string | number, handler: (v: unknown) => void) => {
    const wrapped = (value: unknown): void => {
      if (type === WorkDoneProgress.type && value && typeof value === 'object') {
        onWorkDone(String(token), value as WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd);
      }
      handler(value);
    };
    return (original as (t: unknown, k: string | number, h: (v: unknown) => void) => vscode.Disposable)(type, token, wrapped);
  }) as LanguageClient['onProgress'];
}

function onWorkDone(token: string, v: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd): void {
  if (v.kind === 'begin') {
    activeProgress.add(token);
    progressText = v.title + (v.message ? `: ${v.message}` : '');
    progressPct = v.percentage;
    setUiState('indexing');
    startPolling();
  } else if (v.kind === 'report') {
    if (v.message) progressText = v.message;
    if (v.percentage !== undefined) progressPct = v.percentage;
    if (activeProgress.has(token)) setUiState('indexing');
  } else if (v.kind === 'end') {
    activeProgress.delete(token);
    if (activeProgress.size === 0) {
      progressText = undefined;
      progressPct = undefined;
      void refreshStatus();
    }
  }
}

let progressText: string | undefined;
let progressPct: number | undefined;
let uiState: UiState = 'starting';

function setUiState(s: UiState): void {
  uiState = s;
  const st = lastStatus;
  const stats = st
    ? `${st.files} files, ${st.chunks} sections (${Math.max(0, st.chunks - (st.pending_embeds ?? 0))} embedded), ` +
      `coverage ${Math.round((st.coverage ?? 0) * 100)}%, model ${st.model}`
    : '';
  switch (s) {
    case 'starting':
      statusItem.text = '$(sync~spin) mdseek: starting…';
      statusItem.tooltip = 'mdseek language server is starting';
      statusItem.accessibilityInformation = { label: 'mdseek: starting' };
      statusItem.backgroundColor = undefined;
      break;
    case 'indexing': {
      const pct = progressPct !== undefined ? ` ${Math.round(progressPct)}%` : '';
      statusItem.text = `$(sync~spin) mdseek: indexing…${pct}`;
      statusItem.tooltip = `mdseek is indexing${progressText ? ` — ${progressText}` : ''}${stats ? `\n${stats}` : ''}`;
      statusItem.accessibilityInformation = { label: 'mdseek: indexing' };
      statusItem.backgroundColor = undefined;
      break;
    }
    case 'ready':
      statusItem.text = '$(search) mdseek';
      statusItem.tooltip = `mdseek: ready${stats ? ` — ${stats}` : ''}\nClick for index status`;
      statusItem.accessibilityInformation = { label: 'mdseek: ready' };
      statusItem.backgroundColor = undefined;
      break;
    case 'lexical-only':
      statusItem.text = '$(warning) mdseek: lexical only';
      statusItem.tooltip = `mdseek: semantic search unavailable, keyword search only${st?.message ? ` — ${st.message}` : ''}${stats ? `\n${stats}` : ''}`;
      statusItem.accessibilityInformation = { label: 'mdseek: lexical only' };
      statusItem.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      break;
    case 'error':
    case 'stopped':
      statusItem.text = '$(error) mdseek: server not running';
      statusItem.tooltip = lastStartError ?? 'The mdseek language server is not running';
      statusItem.accessibilityInformation = { label: 'mdseek: server not running' };
      statusItem.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      break;
  }
  statusItem.show();
}

async function refreshStatus(): Promise<StatusResponse | undefined> {
  const c = client;
  if (!c || !clientReady) return undefined;
  try {
    const st = await c.sendRequest<StatusResponse>(STATUS, {});
    if (c !== client) return undefined;
    lastStatus = st;
    if (activeProgress.size > 0 || st.state === 'indexing') {
      setUiState('indexing');
      startPolling();
    } else if (st.state === 'lexical-only') {
      setUiState('lexical-only');
      stopPolling();
    } else {
      setUiState('ready');
      stopPolling();
    }
    return st;
  } catch (err) {
    log(`${STATUS} failed: ${err}`);
    if (activeProgress.size === 0 && uiState === 'starting') setUiState('ready');
    return undefined;
  }
}

function startPolling(): void {
  if (pollTimer) return;
  pollTimer = setInterval(() => void refreshStatus(), 2000);
}

function stopPolling(): void {
  if (pollTimer) clearInterval(pollTimer);
  pollTimer = undefined;
}

// ---------------------------------------------------------------- commands

function requireClient(): LanguageClient | undefined {
  if (client && clientReady) return client;
  const msg = lastStartError ?? 'mdseek: the language server is not running yet.';
  void vscode.window.showErrorMessage(msg);
  return undefined;
}

interface ResultItem extends vscode.QuickPickItem {
  result: SearchResult;
}

/** The breadcrumb without a trailing repetition of the heading itself. */
export function parentCrumb(r: SearchResult): string {
  const crumb = r.breadcrumb || '';
  const parts = crumb.split(' > ');
  if (parts.length > 1 && parts[parts.length - 1] === r.heading) parts.pop();
  return parts.join(' > ') || r.path;
}

function toItem(r: SearchResult): ResultItem {
  return {
    label: r.heading || path.basename(r.path || r.uri),
    description: parentCrumb(r),
    detail: r.snippet,
    alwaysShow: true,
    result: r,
  };
}

function headingLine(r: SearchResult): number {
  return r.range?.start?.line ?? r.start_line ?? 0;
}

export async function openResult(r: SearchResult): Promise<vscode.TextEditor> {
  const uri = vscode.Uri.parse(r.uri);
  const line = headingLine(r);
  const pos = new vscode.Position(line, 0);
  const editor = await vscode.window.showTextDocument(uri, {
    selection: new vscode.Range(pos, pos),
    preview: false,
  });
  editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.AtTop);
  return editor;
}

async function searchSections(): Promise<void> {
  const c = requireClient();
  if (!c) return;
  const limit = vscode.workspace.getConfiguration('mdseek').get<number>('searchLimit', 20);
  const baseTitle = 'mdseek: Search sections';
  const qp = vscode.window.createQuickPick<ResultItem>();
  qp.title = baseTitle;
  qp.placeholder = 'Describe what you are looking for (semantic search over Markdown sections)';
  qp.matchOnDescription = false;
  qp.matchOnDetail = false;
  qp.ignoreFocusOut = false;

  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let cts: vscode.CancellationTokenSource | undefined;

  const run = async (query: string): Promise<void> => {
    const mine = ++seq;
    cts?.cancel();
    cts = new vscode.CancellationTokenSource();
    if (!query.trim()) {
      qp.items = [];
      qp.busy = false;
      return;
    }
    qp.busy = true;
    try {
      const res = await c.sendRequest<SearchResponse>(SEARCH, { query, limit }, cts.token);
      if (mine !== seq) return; // stale
      qp.items = (res?.results ?? []).map(toItem);
      if (res?.mode === 'lexical') {
        qp.title = `${baseTitle} — keyword results only: semantic search is still loading`;
      } else {
        qp.title = baseTitle;
      }
      if (res?.results?.length === 0) {
        qp.placeholder = 'No matching sections';
      }
    } catch (err) {
      if (mine !== seq) return;
      qp.items = [];
      qp.title = `${baseTitle} — error: ${err instanceof Error ? err.message : String(err)}`;
      log(`${SEARCH} failed: ${err}`);
    } finally {
      if (mine === seq) qp.busy = false;
    }
  };

  qp.onDidChangeValue((value) => {
    if (timer) clearTimeout(timer);
    qp.busy = value.trim().length > 0;
    timer = setTimeout(() => void run(value), 150);
  });
  qp.onDidAccept(async () => {
    const item = qp.selectedItems[0] ?? qp.activeItems[0];
    if (!item) return;
    qp.hide();
    try {
      await openResult(item.result);
    } catch (err) {
      void vscode.window.showErrorMessage(`mdseek: cannot open ${item.result.uri}: ${err}`);
    }
  });
  qp.onDidHide(() => {
    if (timer) clearTimeout(timer);
    cts?.cancel();
    seq++;
    qp.dispose();
  });
  qp.show();
}

async function reindex(): Promise<void> {
  const c = requireClient();
  if (!c) return;
  setUiState('indexing');
  startPolling();
  try {
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'mdseek: reindexing' },
      () => c.sendRequest<ReindexResponse>(REINDEX, {}),
    );
    void vscode.window.showInformationMessage(`mdseek: reindexed ${res.files} files, ${res.chunks} sections.`);
  } catch (err) {
    void vscode.window.showErrorMessage(`mdseek: reindex failed: ${err instanceof Error ? err.message : err}`);
  } finally {
    void refreshStatus();
  }
}

export function formatStatus(st: StatusResponse): string {
  const pct = Math.round((st.coverage ?? 0) * 1000) / 10;
  return (
    `mdseek: ${st.state} — ${st.files} files, ${st.chunks} sections, ` +
    `coverage ${pct}%, model ${st.model}, pending embeds ${st.pending_embeds}` +
    (st.message ? ` (${st.message})` : '')
  );
}

async function showStatus(): Promise<void> {
  if (!client || !clientReady) {
    const msg = lastStartError ?? 'mdseek: the language server is not running.';
    void vscode.window.showErrorMessage(msg, 'Show Output').then((c) => c && output.show(true));
    return;
  }
  const st = await refreshStatus();
  if (!st) {
    void vscode.window.showErrorMessage('mdseek: the server did not answer mdseek/status (see the mdseek output).');
    return;
  }
  const text = formatStatus(st);
  log(text);
  void vscode.window.showInformationMessage(text, 'Show Output', 'Reindex').then((choice) => {
    if (choice === 'Show Output') output.show(true);
    else if (choice === 'Reindex') void vscode.commands.executeCommand('mdseek.reindex');
  });
}

interface SelfTestArgs {
  /** Read the real arguments from this JSON file (lets a static keybinding drive it). */
  argsFile?: string;
  query?: string;
  outFile?: string;
  hoverUri?: string;
  hoverLine?: number;
  hoverChar?: number;
  symbolQuery?: string;
}

function hoverToText(h: vscode.Hover): string[] {
  return h.contents.map((c) => {
    if (typeof c === 'string') return c;
    if (c instanceof vscode.MarkdownString) return c.value;
    return (c as { value?: string }).value ?? String(c);
  });
}

/** Hidden command used by the e2e test to cross-check what the UI showed. */
async function selfTest(args: SelfTestArgs): Promise<Record<string, unknown>> {
  if (args?.argsFile) {
    args = { ...JSON.parse(fs.readFileSync(args.argsFile, 'utf8')), argsFile: undefined };
  }
  const out: Record<string, unknown> = {
    ok: true,
    uiState,
    lastStartError: lastStartError ?? null,
    initializationOptions: initializationOptions(),
  };
  const err = (e: unknown): string => (e instanceof Error ? e.message : String(e));
  const editor = vscode.window.activeTextEditor;
  out.activeEditor = editor
    ? {
        uri: editor.document.uri.toString(),
        path: editor.document.uri.fsPath,
        line: editor.selection.active.line,
        character: editor.selection.active.character,
        visibleStart: editor.visibleRanges[0]?.start.line ?? null,
        dirty: editor.document.isDirty,
      }
    : null;
  const c = client && clientReady ? client : undefined;
  if (c) {
    try {
      out.status = await c.sendRequest<StatusResponse>(STATUS, {});
    } catch (e) {
      out.status = { error: err(e) };
    }
    if (args?.query) {
      try {
        out.search = await c.sendRequest<SearchResponse>(SEARCH, { query: args.query, limit: 20 });
      } catch (e) {
        out.search = { error: err(e) };
      }
    }
  } else {
    out.ok = false;
  }
  if (args?.hoverUri !== undefined && args.hoverLine !== undefined) {
    try {
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
        'vscode.executeHoverProvider',
        vscode.Uri.parse(args.hoverUri),
        new vscode.Position(args.hoverLine, args.hoverChar ?? 0),
      );
      out.hover = (hovers ?? []).map(hoverToText);
    } catch (e) {
      out.hover = { error: err(e) };
    }
    try {
      const defs = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>(
        'vscode.executeDefinitionProvider',
        vscode.Uri.parse(args.hoverUri),
        new vscode.Position(args.hoverLine, args.hoverChar ?? 0),
      );
      out.definition = (defs ?? []).map((d) =>
        'targetUri' in d
          ? { uri: d.targetUri.toString(), line: (d.targetSelectionRange ?? d.targetRange).start.line }
          : { uri: d.uri.toString(), line: d.range.start.line },
      );
    } catch (e) {
      out.definition = { error: err(e) };
    }
  }
  try {
    const syms = await vscode.commands.executeCommand<vscode.SymbolInformation[]>(
      'vscode.executeWorkspaceSymbolProvider',
      args?.symbolQuery ?? args?.query ?? '',
    );
    out.workspaceSymbols = (syms ?? []).slice(0, 50).map((s) => ({
      name: s.name,
      kind: vscode.SymbolKind[s.kind],
      container: s.containerName,
      uri: s.location.uri.toString(),
      line: s.location.range.start.line,
    }));
  } catch (e) {
    out.workspaceSymbols = { error: err(e) };
  }
  if (args?.outFile) {
    fs.mkdirSync(path.dirname(args.outFile), { recursive: true });
    fs.writeFileSync(args.outFile + '.tmp', JSON.stringify(out, null, 2));
    fs.renameSync(args.outFile + '.tmp', args.outFile);
  }
  return out;
}

// ---------------------------------------------------------------- links by meaning

/**
 * VS Code does not fire completion trigger characters in Markdown (its quick
 * suggestions are off there), so the server's link targets by meaning would
 * only come with Ctrl+Space. Open the suggestions when `](` or `[[` has just
 * been typed instead (setting `mdseek.suggestLinksWhileTyping`).
 */
function registerLinkSuggestions(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.workspace.onDidChangeTextDocument((e) => {
      const editor = vscode.window.activeTextEditor;
      const last = e.contentChanges[e.contentChanges.length - 1];
      if (!editor || e.document !== editor.document || e.document.languageId !== 'markdown' || !last) return;
      if (!['(', '()', '[', '[]'].includes(last.text) || e.contentChanges.length !== 1) return;
      if (!vscode.workspace.getConfiguration('mdseek').get<boolean>('suggestLinksWhileTyping', true)) return;
      const at = last.range.start;
      const before = e.document.lineAt(at.line).text.slice(0, at.character + 1);
      if (before.endsWith('](') || before.endsWith('[[')) {
        void vscode.commands.executeCommand('editor.action.triggerSuggest');
      }
    }),
  );
}

// ---------------------------------------------------------------- activation

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('mdseek');
  statusItem = vscode.window.createStatusBarItem('mdseek.status', vscode.StatusBarAlignment.Left, 10);
  statusItem.name = 'mdseek';
  statusItem.command = 'mdseek.showStatus';
  context.subscriptions.push(output, statusItem);
  setUiState('starting');

  context.subscriptions.push(
    vscode.commands.registerCommand('mdseek.searchSections', searchSections),
    vscode.commands.registerCommand('mdseek.reindex', reindex),
    vscode.commands.registerCommand('mdseek.showStatus', showStatus),
    vscode.commands.registerCommand('mdseek.selfTest', selfTest),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('mdseek')) void restartClient(context);
    }),
    { dispose: () => stopPolling() },
  );

  registerLinkSuggestions(context);

  // Do not block activation on the server: commands and the status bar are
  // already usable and report the server state themselves.
  restartChain = startClient(context);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
