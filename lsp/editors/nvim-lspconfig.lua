-- mdseek for nvim-lspconfig users (Neovim 0.9/0.10, or 0.11 with lspconfig).
-- lspconfig ships no mdseek entry, so register it once, then set it up.
-- Needs `mdseek` on PATH, or set cmd = { '/path/to/venv/bin/python', '-m', 'mdseek', 'serve' }.

local configs = require('lspconfig.configs')
local util = require('lspconfig.util')

if not configs.mdseek then
  configs.mdseek = {
    default_config = {
      cmd = { 'mdseek', 'serve' },
      filetypes = { 'markdown' },
      root_dir = util.root_pattern('.mdseek', '.git', '.obsidian'),
      single_file_support = false,
      settings = { mdseek = { searchLimit = 20, hoverRelated = 5 } },
    },
  }
end

require('lspconfig').mdseek.setup({})
