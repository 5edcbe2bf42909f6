-- Headless Neovim drives mdseek like a user: open a file, search, hover, jump,
-- edit and :w. Run by tests/test_lsp_nvim.py as
--   nvim --headless -u <tmp config>/nvim/init.lua -i NONE -l tests/nvim/smoke.lua
-- where the tmp config dir ($XDG_CONFIG_HOME/nvim) holds the shipped config
-- installed as docs/editors.md says; with MDSEEK_WS,
-- MDSEEK_FILE, MDSEEK_LINK_LINE/COL, MDSEEK_HEADING_LINE, MDSEEK_QUERY and
-- MDSEEK_OUT (where the results go, as JSON) in the environment.
local h = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/harness.lua')
local results, save, fail, step = h.results, h.save, h.fail, h.step

local logs = {}
vim.lsp.handlers['window/logMessage'] = function(_, params)
  table.insert(logs, params.message)
end
vim.lsp.handlers['window/showMessage'] = function(_, params)
  table.insert(logs, params.message)
end
results.logs = logs
-- the user's config (init.lua, and lsp/mdseek.lua on the runtimepath) is
-- already loaded: -u names the init.lua
local buf = h.open()
step('opened ' .. vim.bo[buf].filetype)

local client = h.attach(buf)
results.root_dir = client.root_dir
results.offset_encoding = client.offset_encoding
step('attached')

local function request(method, params, timeout)
  local r, err = client:request_sync(method, params, timeout or 20000, buf)
  if not r then
    fail(method .. ' failed: ' .. tostring(err))
  end
  if r.err then
    fail(method .. ' error: ' .. vim.inspect(r.err))
  end
  return r.result
end

local st
if not vim.wait(120000, function()
  st = request('mdseek/status', {})
  return st.state == 'ready'
end, 200) then
  fail('index not ready: ' .. vim.inspect(st))
end
results.status = st
step('ready')

-- workspace/symbol through the generic buffer request, as pickers do
local r = vim.lsp.buf_request_sync(buf, 'workspace/symbol', { query = vim.env.MDSEEK_QUERY }, 20000)
results.symbols = r and r[client.id] and r[client.id].result or vim.NIL
step('symbols')

local uri = vim.uri_from_bufnr(buf)
local at_link = {
  textDocument = { uri = uri },
  position = { line = tonumber(vim.env.MDSEEK_LINK_LINE), character = tonumber(vim.env.MDSEEK_LINK_COL) },
}
results.hover_link = request('textDocument/hover', at_link)
results.definition = request('textDocument/definition', at_link)
local at_heading = {
  textDocument = { uri = uri },
  position = { line = tonumber(vim.env.MDSEEK_HEADING_LINE), character = 3 },
}
results.hover_heading = request('textDocument/hover', at_heading)
results.outline = request('textDocument/documentSymbol', { textDocument = { uri = uri } })
step('hover+definition')

-- jump for real: the cursor lands in the target file at the heading
vim.api.nvim_win_set_cursor(0, { at_link.position.line + 1, at_link.position.character })
vim.lsp.buf.definition()
vim.wait(5000, function()
  return vim.api.nvim_buf_get_name(0) ~= vim.api.nvim_buf_get_name(buf)
end, 50)
results.jumped_to = { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0)[1] - 1 }
vim.cmd('buffer ' .. buf)
step('jumped')

-- edit and :w (a real didSave), then see the index follow
vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '', '## Written from Neovim', '', 'The quokkavimword paragraph.' })
vim.cmd('write')
step('written')
local after
if not vim.wait(30000, function()
  local res = vim.lsp.buf_request_sync(buf, 'workspace/symbol', { query = 'quokkavimword' }, 5000)
  after = res and res[client.id] and res[client.id].result
  return after ~= nil and #after > 0 and after[1].name == 'Written from Neovim'
end, 100) then
  fail('the saved change never reached the index')
end
results.after_save = after
step('indexed')

save()
vim.cmd('qall!')
