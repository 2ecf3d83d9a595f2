"""Named exceptions of the engine; each is caught narrowly where it can be handled."""


class KblsError(Exception):
    """Base of every error the engine raises on purpose."""


class ConfigError(KblsError):
    """The configuration file or overrides are invalid; the message names file and key."""


class StoreError(KblsError):
    """The store cannot be opened or used (corrupt, foreign schema, unwritable)."""


class CorruptStoreError(StoreError):
    """The store file is damaged or of a schema this version cannot read."""


class StoreFullError(StoreError):
    """The store cannot be written: its disk is full or refuses more bytes; reads still work."""


class StoreReadOnlyError(StoreFullError):
    """The store's disk or file is read-only: it is fine and can still be read, never set aside."""


class StoreTooNewError(StoreError):
    """The store was written by a newer kbls (a later schema): left as it is, never set aside."""


class StoreBusyError(StoreError):
    """Another process held the store's write lock past the busy timeout; the store is fine."""


class ModelMismatchError(StoreError):
    """The store holds vectors of another model; switching model needs an explicit rebuild."""


class ModelError(KblsError):
    """The embedding model cannot be loaded or verified."""


class OutsideRootError(KblsError):
    """A path lies outside the workspace root; it is refused without being read."""


class QueryError(KblsError):
    """A search request is invalid (bad mode, limit or filter)."""


class StoreRootMismatchError(StoreError):
    """The store holds the index of another workspace root (two roots name one `store:`)."""


class BeingReopenedError(KblsError):
    """The engine asked for was retired (its root is being reopened or closed); retry in a moment."""


class StoreClosedError(StoreError):
    """A read reached a store after it was closed: it must not open a new connection to it."""
