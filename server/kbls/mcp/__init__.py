"""`kbls mcp`: the index as tools for AI agents, over the Model Context Protocol (stdio).

`server` declares the tools on the official SDK's `MCPServer`; `backend` is the one interface
the tools call (search, related, read_note, status), implemented today by `local.LocalBackend`
(the roots' stores opened in this process, never written); a backend that talks to a per-user
daemon can be added beside it. `notes` holds the path rules for reading a note.
"""
