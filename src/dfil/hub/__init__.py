"""Hub backbones and datasets fetched once, at a pinned commit, into one cache.

A fetch (:func:`fetch_model`, :func:`fetch_dataset`) is the only place that talks to the
hub: it lifts the offline flags for itself alone, resolves the revision to a commit,
downloads under a file lock (several jobs needing one repo cause one download) and leaves a
stamp, written last, that names repo, revision, commit and local path. Jobs then read the
files offline through :func:`fetched_path`, which refuses a fetch that did not finish.

Jobs find a fetched repo with :mod:`dfil.hub.local` (the cache set by ``DFIL_HUB_CACHE``).
Cache layout under the configured ``cache_dir`` (its location is in no cell's hash):
``hub/`` (huggingface_hub's cache: ``models--org--name/snapshots/<commit>``),
``prepared/datasets/<org>/<name>/<commit>/`` (a dataset's splits as parquet, written by its
fetch so GPU jobs never write into the cache), ``stamps/`` and ``locks/``.
"""

from dfil.hub.fetch import MODEL_FILES, fetch_dataset, fetch_model, resolve_revision
from dfil.hub.local import (
    cache_root,
    hub_source,
    local_model,
    local_source,
    parse_hub_source,
)
from dfil.hub.online import OFFLINE_FLAGS, online
from dfil.hub.store import fetched_path, read_stamp, snapshot_dir, stamp_path
from dfil.util.errors import HubError

__all__ = [
    "MODEL_FILES",
    "cache_root",
    "hub_source",
    "local_model",
    "local_source",
    "parse_hub_source",
    "OFFLINE_FLAGS",
    "HubError",
    "fetch_dataset",
    "fetch_model",
    "fetched_path",
    "online",
    "read_stamp",
    "resolve_revision",
    "snapshot_dir",
    "stamp_path",
]
