-- Headless Neovim renames with mdseek, as a user would: vim.lsp.buf.rename() on
-- a heading (prepareRename, rename, the WorkspaceEdit applied by Neovim, :wall),
-- then a file move as Neovim's file-explorer plugins do it (oil.nvim, nvim-tree's
-- lsp-file-operations, snacks.rename): workspace/willRenameFiles, its edit
-- applied, vim.lsp.util.rename(), :wall. Run by tests/test_lsp_nvim_rename.py as
--   nvim --headless -u <tmp config>/nvim/init.lua -i NONE -l tests/nvim/rename.lua
-- with MDSEEK_FILE (the file holding the heading), MDSEEK_LINE (its 0-based line),
-- MDSEEK_NAME (the new name), MDSEEK_MOVE_FROM / MDSEEK_MOVE_TO (the file move)
-- and MDSEEK_OUT (results, as JSON) in the environment.
local h = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/harness.lua')
local results, save, fail, step = h.results, h.save, h.fail, h.step

local buf = h.open()
local client = h.attach(buf)
step('attached')
local ops = ((client.server_capabilities.workspace or {}).fileOperations or {}).willRename
results.will_rename_offered = ops ~= nil

-- 1. rename the heading under the cursor
local line = tonumber(vim.env.MDSEEK_LINE)
vim.api.nvim_win_set_cursor(0, { line + 1, 4 })
local before = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1]
vim.lsp.buf.rename(assert(vim.env.MDSEEK_NAME))
if not vim.wait(30000, function()
  return vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1] ~= before
end, 50) then
  fail('the rename did not change the heading')
end
vim.cmd('silent wall')
results.heading = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1]
step('heading renamed')

-- 2. move a file as the explorer plugins do
local from, to = assert(vim.env.MDSEEK_MOVE_FROM), assert(vim.env.MDSEEK_MOVE_TO)
local r = client:request_sync('workspace/willRenameFiles', {
  files = { { oldUri = vim.uri_from_fname(from), newUri = vim.uri_from_fname(to) } },
}, 30000, buf)
if not r or r.err then
  fail('willRenameFiles failed: ' .. vim.inspect(r))
end
if r.result then
  vim.lsp.util.apply_workspace_edit(r.result, client.offset_encoding)
end
vim.cmd('silent wall')
vim.lsp.util.rename(from, to)
vim.cmd('silent wall')
step('file moved')
save()
vim.cmd('qall!')
