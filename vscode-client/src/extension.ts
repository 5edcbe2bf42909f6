// mdseek VS Code client: starts the mdseek language server (stdio) and adds a
// semantic "Search sections" QuickPick, reindex/status commands and a status
// bar item that follows the server's indexing progress.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction,
  CodeLensRequest,
  CodeLensResolveRequest,
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
  /** as written in the file, inline markup kept (`code`, *emphasis*) */
  heading: string;
  /** the same as plain text (what the picker shows; breadcrumbs are plain) */
  heading_text?: string;
  breadcrumb: string;
  /** the heading's level, 1-6 (0: a file without headings); older servers omit it */
  level?: number;
  range: LspRange;
  start_line: number; // 1-based
  end_line: number; // 1-based, inclusive (= LSP's exclusive 0-based end)
  score: number;
  snippet: string;
  lexical_rank: number | null;
  dense_rank: number | null;
}

export interface SearchResponse {
  mode: 'hybrid' | 'lexical';
  /** false while the folder is read or vectors are still being made (the note says how far) */
  complete?: boolean;
  note?: string;
  results: SearchResult[];
}

export interface StatusResponse {
  state: 'indexing' | 'ready' | 'lexical-only' | 'error' | string;
  files: number;
  chunks: number;
  window_fit: number;
  model: string;
  pending_embeds: number;
  message?: string;
  index_path?: string;
  roots?: { path: string; index_path?: string | null }[];
}

/** Where the index files are (one per workspace folder). */
export function indexPaths(st: StatusResponse): string[] {
  const paths = (st.roots ?? []).map((r) => r.index_path).filter((p): p is string => !!p);
  if (!paths.length && st.index_path) paths.push(st.index_path);
  return [...new Set(paths)];
}

export interface ReindexResponse { files: number; chunks: number }

const SEARCH = 'mdseek/search';
const STATUS = 'mdseek/status';
const REINDEX = 'mdseek/reindex';
// What the server indexes by default (index/text/files.py DEFAULT_INCLUDE, matched
// ignoring case): .md and .markdown, also NOTES.MD. VS Code globs are
// case-sensitive on Linux, hence the character classes.
const MARKDOWN_FILES = '**/*.{[mM][dD],[mM][aA][rR][kK][dD][oO][wW][nN]}';

/** The install story, as in the README's "Install" (mdseek is not on PyPI). */
export const INSTALL_HINT =
  'mdseek is not on PyPI: install it from its checkout or a built wheel into a virtualenv ' +
  '(pip install torch==2.13.0 first, then pip install <checkout or mdseek-*.whl>), ' +
  'then point mdseek.server.command at it, e.g. ["/home/you/.venvs/mdseek/bin/mdseek", "serve"]';

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
  'duplicateHeadings',
] as const;

// Settings a workspace may not choose while it is untrusted (package.json's
// restrictedConfigurations, minus server.*, which is user-only everywhere):
// VS Code drops their workspace values in Restricted Mode; taken from the
// user's settings here too, so nothing but the user's reaches the server.
export const RESTRICTED_SETTINGS = [
  'model',
  'indexPath',
  'rerank',
  'rerankTop',
  'backend',
  'precision',
  'queryPrompt',
  'documentPrompt',
  'threads',
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

/** A setting from the user's settings only (or its default): never a workspace's
    `.vscode/settings.json`, which a cloned repository writes. */
function userSetting(cfg: vscode.WorkspaceConfiguration, key: string): unknown {
  const seen = cfg.inspect<unknown>(key);
  return seen?.globalValue ?? seen?.defaultValue;
}

function serverConfig(): { command: string[]; env: Record<string, string> } {
  const cfg = vscode.workspace.getConfiguration('mdseek');
  // The program VS Code runs and its environment: user settings only, in
  // trusted workspaces too (the package.json scope says the same to VS Code).
  let command = userSetting(cfg, 'server.command');
  if (!Array.isArray(command) || command.length === 0 || !command.every((c) => typeof c === 'string')) {
    command = ['mdseek', 'serve'];
  }
  const envRaw = userSetting(cfg, 'server.env') ?? {};
  const env: Record<string, string> = {};
  if (envRaw && typeof envRaw === 'object') {
    for (const [k, v] of Object.entries(envRaw as Record<string, unknown>)) {
      if (v !== undefined && v !== null) env[k] = String(v);
    }
  }
  const cmd = [...(command as string[])];
  cmd[0] = expandHome(cmd[0]);
  return { command: cmd, env };
}

/** `~/x` → `$HOME/x` in the server program (settings are not run by a shell). */
export function expandHome(program: string): string {
  if (program === '~' || program.startsWith('~/')) {
    const home = process.env.HOME || process.env.USERPROFILE;
    if (home) return path.join(home, program.slice(1));
  }
  return program;
}

/** VS Code's built-in Markdown extension provides the outline and breadcrumbs. */
function builtInMarkdownOutline(): boolean {
  return vscode.extensions.getExtension('vscode.markdown-language-features') !== undefined;
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
  delete out.outline;
  // Every heading's lens (counted on resolve): filterLenses filters them by
  // mdseek.codeLens, so changing it needs no restart (and see middleware.workspace).
  out.codeLens = 'all';
  for (const key of SERVER_SETTINGS) if (!(key in out)) out[key] = cfg.get(key);
  if (!vscode.workspace.isTrusted) {
    for (const key of RESTRICTED_SETTINGS) out[key] = userSetting(cfg, key);
  }
  // One outline, not two: mdseek's documentSymbol stays off while VS Code's
  // built-in Markdown outline is there (mdseek.outline: auto | always | never).
  const outline = cfg.get<string>('outline', 'auto');
  out.documentSymbols = outline === 'always' || (outline === 'auto' && !builtInMarkdownOutline());
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
  lastStartError = `mdseek: could not start the language server ${cmd}: ${reason}. Fix: ${INSTALL_HINT}.`;
  log(lastStartError);
  setUiState('error');
  void vscode.window.showErrorMessage(lastStartError, 'Open Setting', 'Install Instructions', 'Show Output').then((choice) => {
    if (choice === 'Open Setting') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'mdseek.server.command');
    } else if (choice === 'Install Instructions') {
      void vscode.commands.executeCommand('extension.open', 'mdseek.mdseek');
    } else if (choice === 'Show Output') {
      output.show(true);
    }
  });
}

// ---------------------------------------------------------------- client lifecycle

let clientStarts = 0; // how many times a server was started (read by the self-test)
let startedWith = ''; // serverSettingsKey() of the running server

/** Everything the server is started with: a change of it restarts the server. */
function serverSettingsKey(): string {
  return JSON.stringify([serverConfig(), initializationOptions()]);
}

type CodeLensMode = 'all' | 'nonzero' | 'off';

function codeLensMode(): CodeLensMode {
  const v = vscode.workspace.getConfiguration('mdseek').get<string>('codeLens', 'nonzero');
  return v === 'all' || v === 'off' ? v : 'nonzero';
}

/** The lenses a user asked for (setting mdseek.codeLens): all of them, only
 * those with a count above 0 (resolved here, as the server counts on resolve),
 * or none. */
async function filterLenses(
  c: LanguageClient,
  lenses: vscode.CodeLens[] | null | undefined,
  token: vscode.CancellationToken,
): Promise<vscode.CodeLens[] | null | undefined> {
  const mode = codeLensMode();
  if (mode === 'off') return [];
  if (mode === 'all' || !lenses?.length) return lenses;
  const resolved = await Promise.all(lenses.map(async (l) => {
    if (l.command) return l;
    try {
      const r = await c.sendRequest(CodeLensResolveRequest.type, c.code2ProtocolConverter.asCodeLens(l), token);
      return r ? c.protocol2CodeConverter.asCodeLens(r) : undefined;
    } catch {
      return undefined;
    }
  }));
  return resolved.filter((l): l is vscode.CodeLens => !!l?.command?.command);
}

/** Asks VS Code for the lenses again (the setting changed). */
function refreshCodeLenses(): void {
  const c = client;
  if (!c || !clientReady) return;
  const feature = c.getFeature(CodeLensRequest.method);
  for (const e of vscode.window.visibleTextEditors) {
    feature.getProvider(e.document)?.onDidChangeCodeLensEmitter.fire();
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  clientStarts++;
  const { command, env } = serverConfig();
  startedWith = serverSettingsKey();
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
    documentSelector: [
      { scheme: 'file', language: 'markdown' },
      { scheme: 'file', pattern: MARKDOWN_FILES },
    ],
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher(MARKDOWN_FILES),
    },
    initializationOptions: initializationOptions(),
    outputChannel: output,
    middleware: {
      provideCodeLenses: async (doc, token, next) => filterLenses(c, await next(doc, token), token),
      provideWorkspaceSymbols: async (query, token, next) => withQuestionRow(query, (await next(query, token)) ?? []),
      workspace: {
        // The server's codeLens chooses which lenses it sends; this extension
        // filters by its own (filterLenses, no restart on a change), so the
        // server always sends every heading's, also when it pulls the settings.
        configuration: async (params, token, next) => {
          const res = await next(params, token);
          if (!Array.isArray(res)) return res;
          return res.map((r, i) =>
            params.items[i]?.section === 'mdseek' && r && typeof r === 'object' && !Array.isArray(r)
              ? { ...r, codeLens: 'all' }
              : r);
        },
      },
    },
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
 * subscribes to the token via client.onProgress; we wrap that to drive the
 * status bar instead of the client's own progress UI (one surface, not two). */
function hookProgress(c: LanguageClient): void {
  const original = c.onProgress.bind(c) as LanguageClient['onProgress'];
  (c as { onProgress: LanguageClient['onProgress'] }).onProgress = ((type: unknown, token: string | number, handler: (v: unknown) => void) => {
    const wrapped = (value: unknown): void => {
      if (type === WorkDoneProgress.type && value && typeof value === 'object') {
        // One progress surface: the status item. The language client's own
        // window progress ("320/494 … embedded" beside it) is not started.
        onWorkDone(String(token), value as WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd);
        return;
      }
      handler(value);
    };
    return (original as (t: unknown, k: string | number, h: (v: unknown) => void) => vscode.Disposable)(type, token, wrapped);
  }) as LanguageClient['onProgress'];
}

function onWorkDone(token: string, v: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd): void {
  if (v.kind === 'begin') {
    activeProgress.add(token);
    progressText = v.message;
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
/** Fires on every status change and status poll (the search picker re-asks
 * while the index fills up and when it becomes ready). */
const uiStateChanged = new vscode.EventEmitter<UiState>();

function setUiState(s: UiState): void {
  const changed = uiState !== s;
  uiState = s;
  if (changed) uiStateChanged.fire(s);
  const st = lastStatus;
  const stats = st ? statusWords(st) : '';
  switch (s) {
    case 'starting':
      statusItem.text = '$(sync~spin) mdseek: starting…';
      statusItem.tooltip = 'mdseek language server is starting';
      statusItem.accessibilityInformation = { label: 'mdseek: starting' };
      statusItem.backgroundColor = undefined;
      break;
    case 'indexing': {
      const words = indexingWords(progressText, progressPct);
      statusItem.text = `$(sync~spin) mdseek: ${words.replace(/, about .*/, '')}`;
      statusItem.tooltip = `mdseek: ${words}${stats ? ` — ${stats} so far` : ''}\nSearch works meanwhile (keyword results first)`;
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
    if (uiState === 'indexing') uiStateChanged.fire('indexing'); // a poll while indexing
    if (activeProgress.size > 0 || st.state === 'indexing') {
      setUiState('indexing');
      startPolling();
    } else if (st.state === 'lexical-only' || st.state === 'error') {
      // 'error': no folder could be indexed; the tooltip shows the server's message
      setUiState('lexical-only');
      stopPolling();
    } else {
      setUiState('ready');
      stopPolling();
    }
    return st;
  } catch (err) {
    log(`${STATUS} failed: ${err}`);
    // a server without mdseek/status is still usable; a dying one is not "ready"
    if (activeProgress.size === 0 && uiState === 'starting' && c === client && clientReady && c.isRunning()) {
      setUiState('ready');
    }
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

// ---------------------------------------------------------------- Ctrl+T: a question row

/** The scheme of the "Search by meaning" row's location: opening it opens the
 * search picker with the query (and closes the tab VS Code opened for it). */
export const QUESTION_SCHEME = 'mdseek-search';
export const QUESTION_ROW = 'Search by meaning: ';

/** Whether the letters of `query` appear in order in `name` (case ignored,
 * spaces skipped): the rows Ctrl+T keeps (VS Code's filter, and the built-in
 * Markdown extension's own) are among these. */
export function fuzzyContains(name: string, query: string): boolean {
  const n = name.toLowerCase();
  let at = 0;
  for (const ch of query.toLowerCase().replace(/\s+/g, '')) {
    at = n.indexOf(ch, at) + 1;
    if (at === 0) return false;
  }
  return true;
}

/** The URI of the question row for `query`. */
export function questionUri(query: string): vscode.Uri {
  // the path is what Ctrl+T shows beside the row (and the tab, closed at once, is named)
  return vscode.Uri.from({ scheme: QUESTION_SCHEME, path: 'opens mdseek Search sections (Ctrl+Alt+M)', query: new URLSearchParams({ q: query }).toString() });
}

/**
 * Ctrl+T (workspace symbols): when no heading matches what was typed, one row
 * "Search by meaning: <query>" that opens the search picker with it. VS Code
 * hands the providers only the first word of what is typed in Ctrl+T and
 * drops every row whose name does not hold the rest, so this row shows for a
 * single word (and while the first word of a question is typed); callers of
 * `vscode.executeWorkspaceSymbolProvider` get it for whole questions.
 */
export function withQuestionRow(query: string, all: vscode.SymbolInformation[]): vscode.SymbolInformation[] {
  // the server's rows of words ("mdseek: no section matches well …") are for
  // symbol pickers that show every row (Neovim's); VS Code's Ctrl+T has this one
  const rows = all.filter((r) => !(r.kind === vscode.SymbolKind.Event && r.name.startsWith('mdseek: ')));
  const q = query.trim();
  if (!q || q.startsWith('#') || rows.some((r) => fuzzyContains(r.name, q))) return rows;
  const row = new vscode.SymbolInformation(
    `${QUESTION_ROW}${q}`,
    vscode.SymbolKind.Event,
    '',
    new vscode.Location(questionUri(q), new vscode.Position(0, 0)),
  );
  return [...rows, row];
}

/** Opening a question row's URI: close the tab VS Code opened for it, then
 * the search picker with the query. */
function registerQuestionRows(context: vscode.ExtensionContext): void {
  const handled = new Set<string>();
  const open = async (uri: vscode.Uri): Promise<void> => {
    const key = uri.toString();
    if (handled.has(key)) return;
    handled.add(key);
    try {
      const tabs = (): vscode.Tab[] => vscode.window.tabGroups.all.flatMap((g) => g.tabs)
        .filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.scheme === QUESTION_SCHEME);
      for (let i = 0; i < 40 && !tabs().length; i++) await new Promise((r) => setTimeout(r, 50));
      if (tabs().length) await vscode.window.tabGroups.close(tabs());
      await searchSections(new URLSearchParams(uri.query).get('q') ?? '');
    } finally {
      handled.delete(key);
    }
  };
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(QUESTION_SCHEME, {
      provideTextDocumentContent: (uri) => {
        void open(uri);
        return `Searching by meaning in mdseek: Search sections (Ctrl+Alt+M): ${new URLSearchParams(uri.query).get('q') ?? ''}\n`;
      },
    }),
    vscode.workspace.onDidOpenTextDocument((d) => {
      if (d.uri.scheme === QUESTION_SCHEME) void open(d.uri);
    }),
  );
}

// ---------------------------------------------------------------- search picker

interface ResultItem extends vscode.QuickPickItem {
  result?: SearchResult; // undefined for the empty-state row
}

const LABEL_MAX = 80;
const CRUMB_PART_MAX = 48;

/** `text` cut to at most `max` characters at a word boundary, with an ellipsis. */
export function shorten(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const sp = cut.lastIndexOf(' ');
  return (sp > max / 2 ? cut.slice(0, sp) : cut).replace(/[\s,;:.\-–—]+$/, '') + '…';
}

/** The breadcrumb without a trailing repetition of the heading itself. */
export function parentCrumb(r: SearchResult): string {
  const crumb = r.breadcrumb || '';
  const parts = crumb.split(' > ');
  if (parts.length > 1 && parts[parts.length - 1] === (r.heading_text ?? r.heading)) parts.pop();
  return parts.join(' > ');
}

/** The heading's level: the server's, else the depth of its breadcrumb. */
export function headingLevel(r: SearchResult): number {
  if (typeof r.level === 'number' && r.level >= 1) return Math.min(6, r.level);
  return Math.min(6, Math.max(1, (r.breadcrumb || '').split(' > ').filter(Boolean).length));
}

/** The folder of a result relative to the workspace ("" at its top). */
function folderOf(r: SearchResult): string {
  const p = (r.path || vscode.Uri.parse(r.uri).fsPath).replace(/\\/g, '/');
  const rel = vscode.workspace.asRelativePath(p.startsWith('/') ? vscode.Uri.file(p) : p, false).replace(/\\/g, '/');
  const dir = path.posix.dirname(rel);
  return dir === '.' ? '' : dir;
}

let extensionUri: vscode.Uri | undefined;

/** One picker row: an icon of the heading's level and the heading, then the
 * folder, file and where in it, then the snippet. Long headings (converted
 * AsciiDoc, whole sentences) are shortened. */
export function toItem(r: SearchResult): ResultItem {
  const file = path.basename(r.path || vscode.Uri.parse(r.uri).fsPath);
  const folder = folderOf(r);
  const crumb = parentCrumb(r)
    .split(' > ')
    .filter(Boolean)
    .map((p) => shorten(p, CRUMB_PART_MAX))
    .join(' > ');
  const where = folder ? `${folder}/${file}` : file;
  const level = headingLevel(r);
  return {
    label: shorten(r.heading_text || r.heading || file, LABEL_MAX),
    iconPath: extensionUri
      ? {
          light: vscode.Uri.joinPath(extensionUri, 'media', `h${level}-light.svg`),
          dark: vscode.Uri.joinPath(extensionUri, 'media', `h${level}-dark.svg`),
        }
      : new vscode.ThemeIcon('symbol-key'),
    description: crumb ? `${where} · ${crumb}` : where,
    detail: r.snippet,
    alwaysShow: true,
    result: r,
  };
}

const NOTE_LINE = 70; // fits the picker's width (checked by the e2e test)

/** `text` in lines of at most `width` characters, cut between words (never with "…"). */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = '';
  for (const w of text.replace(/\s+/g, ' ').trim().split(' ')) {
    if (cur && cur.length + 1 + w.length > width) {
      lines.push(cur);
      cur = w;
    } else {
      cur = cur ? `${cur} ${w}` : w;
    }
  }
  if (cur) lines.push(cur);
  return lines;
}

/** The server's note, whole: one row per line (a QuickPick row is one line). */
function noteItems(note: string): ResultItem[] {
  return wrapWords(note, NOTE_LINE).map((line, i) => ({
    label: i === 0 ? `$(info) ${line}` : `$(blank) ${line}`,
    alwaysShow: true,
  }));
}

export const NOTHING_CLOSE = 'Nothing close in meaning — try other words';

/** The rows shown when there is nothing to list, with the server's note whole. */
function emptyItems(note: string | undefined, waiting: boolean): ResultItem[] {
  if (waiting) {
    return [{
      label: '$(sync~spin) The index is still opening…',
      detail: 'Results appear here as soon as it is ready; keep typing or wait.',
      alwaysShow: true,
    }];
  }
  return [{ label: `$(search-stop) ${NOTHING_CLOSE}`, alwaysShow: true }, ...(note ? noteItems(note) : [])];
}

const STOP = new Set(('a an and are as at be by can do does for from how i if in is it my of on or so the ' +
  'this to was what when where which who why will with you your').split(' '));

/** Query words worth highlighting in the previewed section. */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_][\p{L}\p{N}_'-]*/gu) ?? [];
  return [...new Set(words.filter((w) => w.length >= 3 && !STOP.has(w)))];
}

/** A word's stem for highlighting: "dies" → "di", "promoted" → "promot". */
export function stem(word: string): string {
  const w = word.toLowerCase().replace(/'s$/, '');
  for (const suf of ['ing', 'ed', 'es', 's', 'e', 'ly']) {
    if (w.endsWith(suf) && w.length - suf.length >= 3) return w.slice(0, -suf.length);
  }
  return w;
}

/** Whole words of the query (and their inflections: replica → replicas,
 * promote → promoted), never a longer word ("main" does not match "maintenance"). */
export function termPattern(terms: string[]): RegExp | undefined {
  const stems = [...new Set(terms.map(stem))].filter((t) => t.length >= 2);
  if (!stems.length) return undefined;
  const alt = stems.sort((a, b) => b.length - a.length).map(escapeRe).join('|');
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alt})(?:e|es|ed|ing|s|er|ers|ly|ion|ions|'s)?(?![\\p{L}\\p{N}_])`, 'giu');
}

function headingLine(r: SearchResult): number {
  // range is LSP's (0-based); start_line is 1-based like the CLI's and MCP's
  return r.range?.start?.line ?? (r.start_line ? r.start_line - 1 : 0);
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

/** Shows the section under the picker's selection in the editor without taking
 * the focus (like Quick Open), highlights it and the query's words, and puts
 * back what was there when the picker is cancelled. */
class SectionPeek {
  private readonly sectionDeco = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
  });
  private readonly termDeco = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    borderColor: new vscode.ThemeColor('editor.findMatchHighlightBorder'),
    borderStyle: 'solid',
    borderWidth: '1px',
  });
  private readonly before?: {
    uri: vscode.Uri;
    viewColumn?: vscode.ViewColumn;
    selection: vscode.Selection;
    top?: vscode.Range;
    wasPreview: boolean;
  };
  private openUris = new Set<string>();
  private peeked?: vscode.Uri;
  private seq = 0;
  private inflight: Promise<void> = Promise.resolve();
  private finished = false; // the picker is gone: no more previews

  constructor() {
    const e = vscode.window.activeTextEditor;
    if (e) {
      this.before = {
        uri: e.document.uri,
        viewColumn: e.viewColumn,
        selection: e.selection,
        top: e.visibleRanges[0],
        wasPreview: vscode.window.tabGroups.activeTabGroup.activeTab?.isPreview ?? false,
      };
    }
    for (const g of vscode.window.tabGroups.all) {
      for (const t of g.tabs) if (t.input instanceof vscode.TabInputText) this.openUris.add(t.input.uri.toString());
    }
  }

  /** Previews `r` once the preview being opened has landed; a preview asked
   * for before the last one is dropped (arrowing quickly shows the row that is
   * focused, never one passed over). */
  show(r: SearchResult, terms: string[]): Promise<void> {
    const mine = ++this.seq;
    const next = this.inflight.then(() => this.showNow(r, terms, mine));
    this.inflight = next.catch(() => undefined);
    return next;
  }

  /** Drops a preview asked for and not opened yet (the query changed). */
  drop(): void {
    this.seq++;
  }

  /** Previews opened so far (read by the self-test). */
  shown: string[] = [];

  private async showNow(r: SearchResult, terms: string[], mine: number): Promise<void> {
    if (this.finished || mine !== this.seq) return;
    const uri = vscode.Uri.parse(r.uri);
    const line = headingLine(r);
    let editor: vscode.TextEditor;
    try {
      editor = await vscode.window.showTextDocument(uri, {
        preview: true,
        preserveFocus: true,
        viewColumn: this.before?.viewColumn,
        selection: new vscode.Range(line, 0, line, 0),
      });
    } catch (err) {
      log(`preview of ${r.uri} failed: ${err}`);
      return;
    }
    this.peeked = uri;
    if (mine !== this.seq) return; // the selection moved on meanwhile
    this.shown.push(r.heading_text || r.heading);
    const doc = editor.document;
    const end = Math.min(Math.max(r.end_line ?? line + 1, line + 1), doc.lineCount);
    const section = new vscode.Range(line, 0, Math.max(line, end - 1), 0);
    // centred: the picker covers the top of the editor
    editor.revealRange(new vscode.Range(line, 0, line, 0), vscode.TextEditorRevealType.InCenter);
    editor.setDecorations(this.sectionDeco, [section]);
    const hits: vscode.Range[] = [];
    const re = termPattern(terms);
    if (re) {
      for (let i = line; i < end && hits.length < 500; i++) {
        const text = doc.lineAt(i).text;
        for (const m of text.matchAll(re)) hits.push(new vscode.Range(i, m.index ?? 0, i, (m.index ?? 0) + m[0].length));
      }
    }
    editor.setDecorations(this.termDeco, hits);
  }

  private clear(): void {
    for (const e of vscode.window.visibleTextEditors) {
      e.setDecorations(this.sectionDeco, []);
      e.setDecorations(this.termDeco, []);
    }
  }

  /** No more previews; resolves when the last one has landed (so that
   * opening the chosen section comes after it, never before). */
  async settle(): Promise<void> {
    this.finished = true;
    await this.inflight;
  }

  /** The picker was accepted: keep nothing of the peek but the opened file. */
  dispose(): void {
    this.finished = true;
    this.seq++;
    this.clear();
    this.sectionDeco.dispose();
    this.termDeco.dispose();
  }

  /** The picker was cancelled: back to the editor (and scroll position) of before. */
  async restore(): Promise<void> {
    this.finished = true;
    this.seq++;
    await this.inflight; // a preview still opening would land after the restore
    this.clear();
    const peeked = this.peeked;
    if (!peeked) return;
    if (this.before) {
      const b = this.before;
      const editor = await vscode.window.showTextDocument(b.uri, {
        viewColumn: b.viewColumn,
        selection: b.selection,
        preview: b.wasPreview,
        preserveFocus: false,
      });
      if (b.top) editor.revealRange(b.top, vscode.TextEditorRevealType.AtTop);
    }
    if (!this.openUris.has(peeked.toString()) && (!this.before || this.before.uri.toString() !== peeked.toString())) {
      // the peeked file was not open before: close its preview tab
      for (const g of vscode.window.tabGroups.all) {
        for (const t of g.tabs) {
          if (t.isPreview && t.input instanceof vscode.TabInputText && t.input.uri.toString() === peeked.toString()) {
            await vscode.window.tabGroups.close(t, true);
          }
        }
      }
    }
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The last answer the picker showed (read by the self-test). */
let lastPicker: { value: string; mode?: string; note?: string; rows: number; waiting: boolean; settled: boolean; previews?: string[] } | undefined;

async function searchSections(initial?: unknown): Promise<void> {
  const c = requireClient();
  if (!c) return;
  const limit = vscode.workspace.getConfiguration('mdseek').get<number>('searchLimit', 20);
  const baseTitle = 'mdseek: Search sections';
  const qp = vscode.window.createQuickPick<ResultItem>();
  qp.title = baseTitle;
  qp.placeholder = 'Describe what you are looking for (semantic search over Markdown sections)';
  // alwaysShow keeps every result listed, in the server's order. VS Code
  // highlights where the typed text appears inside a row, word prefixes
  // included ("main" in "maintenance"), and the stable API has no per-word
  // highlights for QuickPick items: the file and the snippet are not matched,
  // so only the heading can be lit; the preview lights whole query words.
  qp.matchOnDescription = false;
  qp.matchOnDetail = false;
  qp.ignoreFocusOut = false;
  const peek = new SectionPeek();

  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let cts: vscode.CancellationTokenSource | undefined;
  let partial = false; // the last answer came before the index was ready
  let lastRows = 0;
  let accepted = false;
  // The focus VS Code puts on the first row of every new or re-filtered list
  // is not the user's: a preview follows the arrow keys only, never the
  // typing. The first row is previewed when the focus comes back to it from
  // another row of the same list (arrow up), never when a list arrives.
  let lastActive: ResultItem | undefined;
  let placed: ResultItem | undefined; // the row the extension focused (not the user)
  lastPicker = { value: '', rows: 0, waiting: false, settled: true, previews: [] };
  const setItems = (items: ResultItem[]): void => {
    qp.items = items;
    // the server's note is listed first, whole; the focus goes to the first section
    const first = items.find((i) => i.result);
    if (first && first !== items[0]) {
      placed = first;
      qp.activeItems = [first];
    }
  };

  const run = async (query: string): Promise<void> => {
    const mine = ++seq;
    cts?.cancel();
    cts = new vscode.CancellationTokenSource();
    if (!query.trim()) {
      setItems([]);
      qp.busy = false;
      partial = false;
      lastPicker = { value: query, rows: 0, waiting: false, settled: true, previews: peek.shown };
      return;
    }
    qp.busy = true;
    lastPicker = { value: query, rows: 0, waiting: false, settled: false, previews: peek.shown };
    try {
      const res = await c.sendRequest<SearchResponse>(SEARCH, { query, limit }, cts.token);
      if (mine !== seq) return; // stale
      const results = res?.results ?? [];
      const waiting = results.length === 0 && /still opening/.test(res?.note ?? '');
      const loading = uiState === 'indexing' || uiState === 'starting';
      // A first index: keyword results first, then hybrid over the vectors made so far.
      partial = waiting || (loading && (res?.mode === 'lexical' || res?.complete === false));
      lastRows = results.length;
      // a note beside results ("no section matches well …: the nearest are listed") comes first, whole
      const note = res?.note && results.length && !loading && res.mode !== 'lexical' ? noteItems(res.note) : [];
      setItems(results.length ? [...note, ...results.map(toItem)] : emptyItems(res?.note, waiting));
      qp.title = loading && res?.mode === 'lexical'
        ? `${baseTitle} — keyword results only: semantic search is still loading`
        : loading && res?.complete === false
          ? `${baseTitle} — partial: semantic search is still loading`
        : res?.mode === 'lexical' && uiState === 'lexical-only'
          ? `${baseTitle} — keyword results only${res.note ? `: ${res.note}` : ''}`
          : baseTitle;
      lastPicker = { value: query, mode: res?.mode, note: res?.note, rows: results.length, waiting, settled: true, previews: peek.shown };
    } catch (err) {
      if (mine !== seq) return;
      setItems([]);
      qp.title = `${baseTitle} — error: ${err instanceof Error ? err.message : String(err)}`;
      log(`${SEARCH} failed: ${err}`);
      lastPicker = { value: query, rows: 0, waiting: false, settled: true, previews: peek.shown };
    } finally {
      if (mine === seq) qp.busy = false;
    }
  };

  const subs: vscode.Disposable[] = [
    // ask again when the index becomes ready (the first answer may have been
    // keyword-only, or empty because the index was still opening)
    uiStateChanged.event((state) => {
      if (!partial || !qp.value.trim() || qp.busy) return;
      // ready: ask for the full answer; still indexing: ask again while nothing is listed
      if (state === 'ready' || state === 'lexical-only' || lastRows === 0) void run(qp.value);
    }),
    qp.onDidChangeValue((value) => {
      if (timer) clearTimeout(timer);
      qp.busy = value.trim().length > 0;
      lastPicker = { value, rows: 0, waiting: false, settled: false, previews: peek.shown };
      peek.drop(); // typing: a preview asked for and not opened yet is dropped
      lastActive = undefined; // the next focus on the first row is VS Code's
      timer = setTimeout(() => void run(value), 150);
    }),
    qp.onDidChangeActive((items) => {
      const item = items[0];
      const prev = lastActive;
      lastActive = item;
      if (item !== undefined && item === placed) {
        placed = undefined;
        return; // focused by setItems, not by the user
      }
      if (item?.result) placed = undefined;
      const list = qp.items;
      if (!item?.result || !list.includes(item)) return; // a note row, or a list gone by
      if (item === list[0] && !(prev !== undefined && prev !== item && list.includes(prev))) return;
      void peek.show(item.result, queryTerms(qp.value));
    }),
    qp.onDidAccept(async () => {
      const item = qp.selectedItems[0] ?? qp.activeItems[0];
      if (!item?.result) return; // the empty-state row
      accepted = true;
      qp.hide();
      try {
        await peek.settle();
        await openResult(item.result);
      } catch (err) {
        void vscode.window.showErrorMessage(`mdseek: cannot open ${item.result.uri}: ${err}`);
      } finally {
        peek.dispose();
      }
    }),
    qp.onDidHide(() => {
      if (timer) clearTimeout(timer);
      cts?.cancel();
      seq++;
      for (const d of subs) d.dispose();
      if (!accepted) void peek.restore().finally(() => peek.dispose());
      qp.dispose();
    }),
  ];
  const question = typeof initial === 'string' && initial.trim() ? initial : undefined;
  // opened with a question (Ctrl+T's "Search by meaning" row): the picker shows
  // it from its first frame (set before show, never an empty box first)
  if (question) qp.value = question;
  qp.show();
  if (question) {
    lastPicker = { value: question, rows: 0, waiting: false, settled: false, previews: peek.shown };
    void run(question);
  }
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

/** The state in words a user knows: "ready", "indexing", "keyword search only". */
export function stateWords(st: StatusResponse): string {
  if (st.state === 'lexical-only') return 'keyword search only';
  return st.state;
}

/** The server's work-done progress in plain words: "reading files 12 of 42",
 * "loading the model", "indexing 64%, about 40 s left" (the server counts
 * chunks and passages together while embedding: a percentage says it plainly). */
export function indexingWords(message: string | undefined, pct: number | undefined): string {
  const m = message ?? '';
  const files = /^(\d+)(?:\/| of )(\d+) files/.exec(m);
  const left = /about \d+ (?:min|s) left/.exec(m)?.[0];
  if (files) return `reading files ${files[1]} of ${files[2]}`;
  if (/loading the embedding model/.test(m)) return 'loading the model';
  if (/waiting for another mdseek/.test(m)) return 'waiting for another mdseek';
  if (pct !== undefined) return `indexing ${Math.round(pct)}%${left ? `, ${left}` : ''}`;
  return 'indexing…';
}

/** "42 files, 494 sections" (what the status item's tooltip says). */
export function statusWords(st: StatusResponse): string {
  return `${st.files} ${st.files === 1 ? 'file' : 'files'}, ${st.chunks} ${st.chunks === 1 ? 'section' : 'sections'}`;
}

/** What clicking the status item says: the state, the counts, where the index is. */
export function formatStatus(st: StatusResponse): string {
  const where = indexPaths(st);
  return (
    `mdseek: ${stateWords(st)} — ${statusWords(st)}` +
    (where.length ? `; index in ${where.join(', ')}` : '') +
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
  /** Ask mdseek/search for the score parts too (where the matched passage is). */
  explain?: boolean;
  /** Also return every diagnostic the mdseek server reported (pulled or pushed). */
  diagnostics?: boolean;
  /** Save every editor (after a rename left changed files open). */
  saveAll?: boolean;
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
    picker: lastPicker ?? null,
    clientStarts,
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
        lineText: editor.document.lineAt(editor.selection.active.line).text,
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
        out.search = await c.sendRequest<SearchResponse>(SEARCH, { query: args.query, limit: 20, explain: !!args.explain });
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
  if (args?.diagnostics) {
    out.diagnostics = vscode.languages
      .getDiagnostics()
      .flatMap(([uri, ds]) => ds.filter((d) => d.source === 'mdseek').map((d) => ({
        uri: uri.toString(),
        line: d.range.start.line,
        message: d.message,
      })));
  }
  if (args?.saveAll) out.saved = await vscode.workspace.saveAll(false);
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

// ---------------------------------------------------------------- code lens

type LspLocation = { uri: string; range: LspRange };

/** The server's "N references" lens: [uri, position, locations] in LSP JSON,
 * shown in VS Code's references peek (which wants VS Code's own types). */
async function showReferences(uri: string, position: LspPosition, locations: LspLocation[]): Promise<void> {
  const pos = (p: LspPosition) => new vscode.Position(p.line, p.character);
  await vscode.commands.executeCommand(
    'editor.action.showReferences',
    vscode.Uri.parse(uri),
    pos(position),
    (locations ?? []).map(
      (l) => new vscode.Location(vscode.Uri.parse(l.uri), new vscode.Range(pos(l.range.start), pos(l.range.end))),
    ),
  );
}

// ---------------------------------------------------------------- activation

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionUri = context.extensionUri;
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
    vscode.commands.registerCommand('mdseek.showReferences', showReferences),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('mdseek.codeLens')) refreshCodeLenses();
      // settings the server reads restart it; the client's own (codeLens) do not
      if (e.affectsConfiguration('mdseek') && serverSettingsKey() !== startedWith) void restartClient(context);
    }),
    { dispose: () => stopPolling() },
    uiStateChanged,
  );

  registerLinkSuggestions(context);
  registerQuestionRows(context);

  // Do not block activation on the server: commands and the status bar are
  // already usable and report the server state themselves.
  restartChain = startClient(context);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
