"""The `kb/*` protocol: the wire structs every client and the server share, and their JSON Schema."""
