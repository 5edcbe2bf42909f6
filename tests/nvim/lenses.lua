-- Headless Neovim runs mdseek's "N references" code lens with the shipped
-- config: vim.lsp.codelens.refresh(), then vim.lsp.codelens.run() on a heading,
-- whose command (the config's `commands`) fills the quickfix list. Run by
-- tests/test_lsp_nvim_lenses.py with MDSEEK_FILE, MDSEEK_LINE (0-based heading
-- line) and MDSEEK_OUT (results, as JSON) in the environment.
local h = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/harness.lua')
local results, save, fail, step = h.results, h.save, h.fail, h.step

local buf = h.open()
local client = h.attach(buf)

local line = tonumber(vim.env.MDSEEK_LINE)
local lens
if not vim.wait(30000, function()
  vim.lsp.codelens.refresh({ bufnr = buf })
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    if l.range.start.line == line and l.command and l.command.title ~= '' then
      lens = l
    end
  end
  return lens ~= nil
end, 200) then
  fail('no resolved lens on line ' .. line .. ': ' .. vim.inspect(vim.lsp.codelens.get(buf)))
end
results.title = lens.command.title

vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
vim.lsp.codelens.run()
if not vim.wait(10000, function()
  return #vim.fn.getqflist() > 0
end, 50) then
  fail('running the lens filled no quickfix list')
end
results.qf_title = vim.fn.getqflist({ title = 1 }).title
results.items = {}
for _, it in ipairs(vim.fn.getqflist()) do
  table.insert(results.items, { vim.api.nvim_buf_get_name(it.bufnr), it.lnum, it.col })
end
save()
vim.cmd('qall!')
