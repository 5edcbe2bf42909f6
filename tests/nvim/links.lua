-- Headless Neovim writes links by meaning with mdseek, as a user would: the
-- "Link to related section" code action (vim.lsp.buf.code_action, applied),
-- then completion after '](' (the item's textEdit applied as Neovim's completion
-- does), and gd on each inserted link. Run by tests/test_lsp_nvim_links.py as
--   nvim --headless -u <tmp config>/nvim/init.lua -i NONE -l tests/nvim/links.lua
-- (the shipped lsp/mdseek.lua installed as documented), MDSEEK_FILE (a draft whose line
-- MDSEEK_LINE ends a paragraph), MDSEEK_WANT (a path the action should link to)
-- and MDSEEK_OUT (results, as JSON) in the environment.
local h = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/harness.lua')
local results, save, fail, step = h.results, h.save, h.fail, h.step

-- the user's config (init.lua + lsp/mdseek.lua on the runtimepath) is already loaded
local buf = h.open()
local client = h.attach(buf)
step('attached')

local st
if not vim.wait(120000, function()
  local r = client:request_sync('mdseek/status', {}, 20000, buf)
  st = r and r.result
  return st ~= nil and st.state == 'ready'
end, 200) then
  fail('index not ready: ' .. vim.inspect(st))
end
step('ready')

local want = assert(vim.env.MDSEEK_WANT)
local line = tonumber(vim.env.MDSEEK_LINE) -- 0-based
local function line_text(l)
  return vim.api.nvim_buf_get_lines(buf, l, l + 1, false)[1]
end

-- 1. the code action, at the end of the paragraph, applied by Neovim
vim.api.nvim_win_set_cursor(0, { line + 1, #line_text(line) })
local titles = {}
local picked = false
vim.lsp.buf.code_action({
  context = { only = { 'refactor' }, diagnostics = {} },
  filter = function(action) -- the first (best) suggestion into MDSEEK_WANT: one action, applied
    table.insert(titles, action.title)
    if picked or action.title:find(want, 1, true) == nil then
      return false
    end
    picked = true
    return true
  end,
  apply = true,
})
if not vim.wait(30000, function()
  return line_text(line):find('](', 1, true) ~= nil
end, 50) then
  fail('the code action did not insert a link; offered: ' .. vim.inspect(titles))
end
results.titles = titles
results.after_action = line_text(line)
step('code action applied')

local function jump(l, col)
  vim.api.nvim_win_set_cursor(0, { l + 1, col })
  vim.lsp.buf.definition()
  vim.wait(10000, function()
    return vim.api.nvim_get_current_buf() ~= buf
  end, 50)
  local where = { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0)[1] - 1 }
  vim.cmd('buffer ' .. buf)
  return where
end
results.action_jump = jump(line, results.after_action:find(' %[') + 1)
step('action link resolves')

-- 2. completion after '](' on a new line of the paragraph
vim.api.nvim_buf_set_lines(buf, line + 1, line + 1, false, { 'See [the steps](' })
local cline = line + 1
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = cline, character = #line_text(cline) },
  context = { triggerKind = 2, triggerCharacter = '(' },
}
local r = client:request_sync('textDocument/completion', params, 30000, buf)
if not r or r.err or not r.result then
  fail('completion failed: ' .. vim.inspect(r))
end
local items = r.result.items or r.result
results.completion_labels = vim.tbl_map(function(i)
  return i.label
end, items)
table.sort(items, function(a, b)
  return (a.sortText or a.label) < (b.sortText or b.label)
end)
local top = items[1]
results.completion_top = top.textEdit.newText
vim.lsp.util.apply_text_edits({ top.textEdit }, buf, client.offset_encoding)
results.after_completion = line_text(cline)
step('completion applied')
results.completion_jump = jump(cline, 6)
step('completion link resolves')

save()
vim.cmd('qall!')
