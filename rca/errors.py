"""Every exception rca raises on purpose.

::

    RcaError
    ├── SchemaError        a frame does not match rca.schema
    ├── StoreError         the store cannot be opened or written
    │   ├── StoreLockedError   another rca process holds the store's lock
    │   └── StoreVersionError  the store was written by an incompatible schema version
    ├── InputError         the input folder or file cannot be used at all
    ├── FileFormatError    one file in a binary format cannot be read (damaged, hostile): its manifest error
    ├── SourceError        a source module is misdeclared (duplicate name, unknown --format)
    ├── KnowledgeBaseError the knowledge base does not validate, or names an entry it lacks
    ├── ReportError        a report notebook is missing or failed to run
    └── RedactionError     a redaction rules file or category is invalid, or a redacted view was written to

Problems with single files or lines are not exceptions: they become manifest rows and
warnings, so one bad file never stops an ingest.
"""


class RcaError(Exception):
    """Base class for every error rca raises deliberately."""


class SchemaError(RcaError):
    """A frame does not have the columns and dtypes that rca.schema defines."""


class StoreError(RcaError):
    """The store cannot be opened or written."""


class StoreLockedError(StoreError):
    """Another rca process is writing the store."""


class StoreVersionError(StoreError):
    """The store was written with a schema version this rca cannot read."""


class InputError(RcaError):
    """The input path is missing or nothing in it could be read."""


class FileFormatError(RcaError):
    """A binary file cannot be read as its format (damaged, truncated, or holding code); the driver records it."""


class SourceError(RcaError):
    """A source is declared twice, or a requested format does not exist."""


class KnowledgeBaseError(RcaError):
    """The knowledge base has validation errors (listed as file:line), or an unknown entry id was asked for."""


class ReportError(RcaError):
    """A report notebook is missing, or a cell of it failed while running (the partly run copy is kept)."""


class RedactionError(RcaError):
    """A redaction rules file cannot be read or is invalid, a category is unknown, or a redacted view was asked to write."""
