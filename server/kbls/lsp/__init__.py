"""The language server: pygls handlers, the kb/* wire structs and every conversion to the wire."""
