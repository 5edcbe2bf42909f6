-- Headless Neovim opens a note in a folder with no .git, .obsidian or .mdseek
-- and searches it. Run by tests/test_lsp_no_folder.py as
--   nvim --headless -u <tmp config>/nvim/init.lua -i NONE -l tests/nvim/no_marker.lua
-- with MDSEEK_FILE, MDSEEK_QUERY and MDSEEK_OUT (the results, as JSON) in the environment.
local out = assert(vim.env.MDSEEK_OUT)
local results = {}

local function save()
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(results))
  f:close()
end

local function fail(msg)
  results.error = msg
  save()
  vim.cmd('cquit 1')
end

vim.cmd('filetype on')
vim.cmd.edit(vim.fn.fnameescape(assert(vim.env.MDSEEK_FILE)))
local buf = vim.api.nvim_get_current_buf()
local client
if not vim.wait(30000, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'mdseek' })[1]
  return client ~= nil and client.initialized
end, 50) then
  fail('the mdseek client did not attach')
end
results.root_dir = client.root_dir or vim.NIL

local symbols
if not vim.wait(120000, function()
  local r = vim.lsp.buf_request_sync(buf, 'workspace/symbol', { query = vim.env.MDSEEK_QUERY }, 20000)
  symbols = r and r[client.id] and r[client.id].result or {}
  return #symbols > 0
end, 200) then
  fail('no workspace symbol')
end
results.symbols = symbols
save()
vim.cmd('qall!')
