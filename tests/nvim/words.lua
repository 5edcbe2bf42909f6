-- Headless Neovim: the words mdseek gives a Neovim user, as a user sees them.
-- Run by tests/test_lsp_nvim_words.py as
--   nvim --headless -u <tmp config>/nvim/init.lua -i NONE -l tests/nvim/words.lua
-- with the shipped config installed (lsp/mdseek.lua + vim.lsp.enable) and in
-- the environment MDSEEK_FILE (a file to open), MDSEEK_QUERY (a question for
-- vim.lsp.buf.workspace_symbol), MDSEEK_INCLUDE (optional: the include globs,
-- comma-separated) and MDSEEK_OUT (the results, as JSON).
local h = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/harness.lua')
local results, save, fail, step = h.results, h.save, h.fail, h.step

local function messages()
  return vim.api.nvim_exec2('messages', { output = true }).output
end

if vim.env.MDSEEK_INCLUDE then
  -- the user's own settings beside the shipped config
  vim.lsp.config('mdseek', { settings = { mdseek = { include = vim.split(vim.env.MDSEEK_INCLUDE, ',') } } })
end
local buf = h.open()

local client = h.attach(buf)

-- the index's status words, in :messages (the shipped config echoes the
-- server's progress as it begins and ends)
if not vim.wait(120000, function()
  return messages():find('mdseek: ready', 1, true) ~= nil
end, 100) then
  fail('no "mdseek: ready" in :messages: ' .. messages())
end

-- the symbol picker of vim.lsp.buf.workspace_symbol: the quickfix list
local query = assert(vim.env.MDSEEK_QUERY)
local title = string.format("Symbols matching '%s'", query)
vim.fn.setqflist({}, ' ', { title = 'before' })
vim.lsp.buf.workspace_symbol(query)
if not vim.wait(30000, function()
  return vim.fn.getqflist({ title = 1 }).title == title
end, 50) then
  fail('no quickfix list "' .. title .. '"; :messages: ' .. messages())
end
results.items = vim.tbl_map(function(it)
  return { text = it.text, file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum }
end, vim.fn.getqflist())
results.messages = messages()
save()
vim.cmd('qall!')
