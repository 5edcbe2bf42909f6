-- Headless Neovim opens a note in a folder with no .git, .obsidian or .mdseek
-- and searches it. Run by tests/test_lsp_no_folder.py as
--   nvim --headless -u <tmp config>/nvim/init.lua -i NONE -l tests/nvim/no_marker.lua
-- with MDSEEK_FILE, MDSEEK_QUERY and MDSEEK_OUT (the results, as JSON) in the environment.
local h = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/harness.lua')
local results, save, fail, step = h.results, h.save, h.fail, h.step

local buf = h.open()
local client = h.attach(buf)
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
