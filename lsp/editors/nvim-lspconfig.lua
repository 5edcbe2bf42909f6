-- mdseek in an init.lua that uses nvim-lspconfig (Neovim 0.11+, lspconfig 2.x).
--
-- lspconfig 2.x configures servers through Neovim's own API: vim.lsp.config()
-- and vim.lsp.enable(); `require('lspconfig').<server>.setup{}` is deprecated.
-- lspconfig ships no mdseek config, so define it here (or save
-- nvim/lsp/mdseek.lua as ~/.config/nvim/lsp/mdseek.lua) and enable it next to
-- the servers lspconfig provides, e.g. vim.lsp.enable({ 'marksman', 'mdseek' }).
-- Needs `mdseek` on PATH (README "Install"), or cmd = { '/path/to/venv/bin/mdseek', 'serve' }.

vim.lsp.config('mdseek', {
  cmd = { 'mdseek', 'serve' },
  filetypes = { 'markdown' },
  -- The workspace is the nearest folder holding .git, .obsidian or .mdseek,
  -- else the file's own folder (a plain notes folder works too).
  root_dir = function(bufnr, on_dir)
    local file = vim.api.nvim_buf_get_name(bufnr)
    on_dir(vim.fs.root(bufnr, { '.git', '.obsidian', '.mdseek' }) or vim.fs.dirname(file))
  end,
  settings = { mdseek = { searchLimit = 20, hoverRelated = 5 } },
  -- The index's state in :messages, in words ("mdseek: indexing notes…",
  -- then "mdseek: ready: 42 files, 494 sections"); the progress between goes
  -- to vim.lsp.status() and LspProgress as usual.
  handlers = {
    ['$/progress'] = function(err, params, ctx, config)
      local v = params and params.value
      if type(v) == 'table' and v.kind == 'begin' and v.title then
        vim.notify(v.title .. '…')
      elseif type(v) == 'table' and v.kind == 'end' and v.message then
        vim.notify('mdseek: ' .. v.message)
      end
      return vim.lsp.handlers['$/progress'](err, params, ctx, config)
    end,
  },
  commands = {
    ['mdseek.showReferences'] = function(command, ctx)
      -- the "N references" code lens: its locations into the quickfix list
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      local items = vim.lsp.util.locations_to_items(command.arguments[3] or {}, client.offset_encoding)
      vim.fn.setqflist({}, ' ', { title = command.title, items = items })
      vim.cmd.copen()
    end,
  },
})
vim.lsp.enable('mdseek')
