"""mdseek language server and command line (thin protocol layer over mdseek.index)."""
