"""The MCP server (SPEC §9): the vault for any MCP client, under the same rules.

A thin front end like the CLI: each tool parses its arguments, calls
`epimem.api.memory.Memory` (or recall and the mirror's analyses) and renders
the result as the same JSON the CLI's `--json` prints, with a line of text
beside it. Nothing here writes a file: every change goes through the API's
one write path, so rules 9, 14 and 17, the vault lock and the compare-and-swap
of a hand edit hold for an MCP client as for the CLI.

    server.build(root)          the MCPServer (tools, resources, prompts)
    http.serve(root, host, port) streamable HTTP behind the bearer token
"""
