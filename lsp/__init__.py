"""mdseek's three front ends over :mod:`mdseek.index`, siblings: the language
server (:mod:`.server`), the MCP server (:mod:`.mcp`) and the command line (:mod:`.cli`)."""
