"""epimem inside other people's programs: backends that a developer wires into their own app.

`anthropic_memory`: the Claude API's client-side memory tool (`memory_20250818`) over a vault
(docs/anthropic-memory.md). A front end like `cli/` and `mcp/`: it parses what the model sends,
calls `epimem.api` and renders the result; no module of epimem imports it (tests/architecture).
"""
