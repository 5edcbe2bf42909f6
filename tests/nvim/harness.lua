-- What every headless Neovim script here shares: its results (written as JSON
-- to MDSEEK_OUT), a failure that says why and quits with 1, the steps taken,
-- and the file MDSEEK_FILE opened with the mdseek client attached. A script
-- loads it beside itself:
--   local h = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/harness.lua')
local M = { results = {} }
local out = assert(vim.env.MDSEEK_OUT)

function M.save()
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(M.results))
  f:close()
end

function M.fail(msg)
  M.results.error = msg
  M.save()
  vim.cmd('cquit 1')
end

function M.step(name)
  M.results.steps = M.results.steps or {}
  table.insert(M.results.steps, name)
end

-- MDSEEK_FILE opened as a user opens it (the user's config, init.lua and
-- lsp/mdseek.lua on the runtimepath, is already loaded: -u names the init.lua).
function M.open()
  vim.cmd('filetype on')
  vim.cmd.edit(vim.fn.fnameescape(assert(vim.env.MDSEEK_FILE)))
  return vim.api.nvim_get_current_buf()
end

-- The mdseek client of buffer `buf`, once attached and initialised.
function M.attach(buf)
  local client
  if not vim.wait(30000, function()
    client = vim.lsp.get_clients({ bufnr = buf, name = 'mdseek' })[1]
    return client ~= nil and client.initialized
  end, 50) then
    M.fail('the mdseek client did not attach')
  end
  return client
end

return M
