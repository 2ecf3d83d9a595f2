"""The per-user daemon: one warm kbls per user serving every editor window, the CLI and MCP.

`paths` (runtime folder and socket), `listener` (the unix-socket server and its peer check),
`host` (the shared daemon and the roots each connection holds), `connection` (one LSP session on
the socket), `spawn` (starting the daemon once under a lock), `relay` (`kbls serve` as a
stdio<->socket relay), `client` and `queries` (the CLI's and MCP's calls). See docs/userdaemon.md.
"""
