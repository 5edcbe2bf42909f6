"""The MCP server (``mdseek mcp``): :mod:`.server` is its tools, :mod:`.args`
their arguments checked in mdseek's words."""
