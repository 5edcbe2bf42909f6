-- mdseek for Neovim 0.11+: find markdown sections by meaning.
--
-- Paste this into your init.lua (or save it as ~/.config/nvim/lsp/mdseek.lua
-- without the last line and call vim.lsp.enable('mdseek') yourself).
-- It needs `mdseek` on your PATH (pip install mdseek); otherwise set `cmd` to
-- e.g. { '/path/to/venv/bin/python', '-m', 'mdseek', 'serve' }.
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
--                                 to a section elsewhere about the same thing
--   completion (<C-x><C-o>, or your completion plugin) after '](' and '[[':
--                                 sections ranked by meaning, then file names;
--                                 after '#': the target's headings
--   warnings for broken links
-- The index lives in <root>/.mdseek/index.sqlite and follows your saves.

vim.lsp.config('mdseek', {
  cmd = { 'mdseek', 'serve' },
  filetypes = { 'markdown' },
  -- The workspace is the nearest folder holding one of these.
  root_markers = { '.mdseek', '.git', '.obsidian' },
  -- Settings (all optional), sent at start and on request:
  --   model        sentence-transformers model name or path ('' = bundled all-MiniLM-L6-v2)
  --   indexPath    index file ('' = <root>/.mdseek/index.sqlite)
  --   include      globs to index, default { '**/*.md', '**/*.markdown' }
  --   exclude      extra globs to skip (.git, node_modules, .mdseek are always skipped)
  --   maxFileSize  bytes; larger files are skipped (default 5000000)
  --   searchLimit  results per search (default 20)
  --   hoverRelated related sections in a heading's hover (default 5, 0 = none)
  settings = {
    mdseek = {
      searchLimit = 20,
      hoverRelated = 5,
    },
  },
  init_options = {},
})

vim.lsp.enable('mdseek')
