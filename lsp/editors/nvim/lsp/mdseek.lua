-- mdseek for Neovim 0.11+: find markdown sections by meaning.
--
-- Save this file unchanged as ~/.config/nvim/lsp/mdseek.lua and add one line
-- to your init.lua:
--
--   vim.lsp.enable('mdseek')
--
-- It needs `mdseek` on your PATH (see the README's "Install": mdseek is not
-- on PyPI, install it from its checkout or a built wheel into a virtualenv);
-- otherwise set `cmd` below to e.g. { '/path/to/venv/bin/mdseek', 'serve' }.
--
-- What you get in markdown buffers:
--   :lua vim.lsp.buf.workspace_symbol('how do I fail over the database')
--                                 semantic search over every section (hybrid:
--                                 keywords + meaning); also works in pickers
--                                 such as Telescope's lsp_workspace_symbols
--   gd / vim.lsp.buf.definition() on [t](other.md#anchor), [t](#anchor),
--                                 [t][ref], [[note]], [[note#Heading]] jumps
--                                 to the section
--   K  / vim.lsp.buf.hover()      on a link: a preview of the target section;
--                                 on a heading: the sections most related to it
--   gO / vim.lsp.buf.document_symbol()  the heading outline
--   grr / vim.lsp.buf.references() on a heading: the links that point to it
--   gra / vim.lsp.buf.code_action() on a paragraph or a selection:
--                                 "Link to related section: ..." inserts a link
--                                 to a section elsewhere about the same thing;
--                                 on a broken anchor: the nearest existing heading
--   completion (<C-x><C-o>, or your completion plugin) after '](' and '[[':
--                                 sections ranked by meaning, then file names;
--                                 after '#': the target's headings
--   warnings for broken links in every indexed file, opened or not
--   folding: vim.o.foldmethod = 'expr'; vim.o.foldexpr = 'v:lua.vim.lsp.foldexpr()'
--   code lens "N references" above headings: vim.lsp.codelens.refresh() (e.g. in
--                                 a BufEnter/InsertLeave autocmd), then
--                                 vim.lsp.codelens.run() on the heading fills the
--                                 quickfix list with the links to it
-- The index lives in ~/.cache/mdseek/indexes/ (or <root>/.mdseek/index.sqlite if
-- that exists) and follows your saves; `mdseek status <root>` says where.
return {
  cmd = { 'mdseek', 'serve' },
  filetypes = { 'markdown' },
  -- The workspace is the nearest folder holding .git, .obsidian or .mdseek,
  -- else the file's own folder (a plain notes folder works too).
  root_dir = function(bufnr, on_dir)
    local file = vim.api.nvim_buf_get_name(bufnr)
    on_dir(vim.fs.root(bufnr, { '.git', '.obsidian', '.mdseek' }) or vim.fs.dirname(file))
  end,
  -- Settings (all optional), sent when the server asks (workspace/configuration):
  --   model        sentence-transformers model folder ('' = bundled all-MiniLM-L6-v2)
  --   indexPath    index file ('' = the default, outside the workspace)
  --   include      globs to index, default { '**/*.md', '**/*.markdown' }
  --   exclude      extra globs to skip (.git, node_modules, .mdseek are always skipped)
  --   maxFileSize  bytes; larger files are skipped (default 5000000)
  --   searchLimit  results per search (default 20)
  --   hoverRelated related sections in a heading's hover (default 5, 0 = none)
  --   codeLens     "N references" above the headings a link reaches ('nonzero',
  --                the default), above every heading ('all') or none ('off')
  settings = {
    mdseek = {
      searchLimit = 20,
      hoverRelated = 5,
    },
  },
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
}
