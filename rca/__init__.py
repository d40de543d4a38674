"""rca: offline log forensics and root-cause analysis for GPU / ML infrastructure.

The public API, used by the CLI and the notebooks alike::

    import rca
    report = rca.ingest("logs/", "rca-store")
    events = rca.open_store("rca-store").events()
    incidents = rca.correlate(events).incidents
    modes = rca.cluster(incidents).modes
"""

from rca.cluster import cluster
from rca.correlate import correlate
from rca.errors import RcaError
from rca.ingest import IngestOptions, IngestReport, ingest, parse_text
from rca.store import Store, open_store

__version__ = "0.1.0"

__all__ = ["IngestOptions", "IngestReport", "RcaError", "Store", "__version__", "cluster", "correlate", "ingest", "open_store", "parse_text"]
