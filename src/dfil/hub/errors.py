"""What went wrong with a hub repo, said with the backbone or dataset it is and the fix.

huggingface_hub raises GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError and
connection errors; :func:`explain` turns each into one :class:`HubError` line naming the
grid entry, the repo and what to do (a token, the id, the revision, a reachable endpoint).
A repo that exists answers for its refs; a missing one does not, which tells "no such
revision" from "no such repo" where a server answers both with the same status (olah's
local mirrors answer an unknown revision with 401 RepoNotFound, the hub with 404), and a
repo that lists no refs and answers 401 or 404 without the hub's error code (olah, asked
for a commit of a repo it lacks) as missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from dfil.util.errors import GatedRepo, HubError

DEFAULT_ENDPOINT = "https://huggingface.co"
TOKEN_FIX = ("give this machine a token with access: `export HF_TOKEN=hf_...` (a read token "
             "from https://huggingface.co/settings/tokens) or `hf auth login`")


@dataclass(frozen=True)
class Target:
    """One repo at one revision, as the grid config names it.

    ``kind`` is ``model`` or ``dataset``; ``label`` the config's name for it (backbone
    ``qwen2.5-7b``, dataset ``frog``); ``endpoint`` None means huggingface_hub's own
    (``HF_ENDPOINT``, else https://huggingface.co).
    """

    kind: str
    repo: str
    revision: str
    label: str = ""
    endpoint: str | None = None

    def __post_init__(self):
        if self.kind not in ("model", "dataset"):
            raise ValueError(f"unknown repo kind {self.kind!r}; expected 'model' or 'dataset'")
        if self.repo.count("/") != 1 or not all(self.repo.split("/")):
            raise HubError(f"{self.describe()}: {self.repo!r} is not a hub id of the form "
                           "org/name")
        if not self.revision:
            raise HubError(f"{self.describe()}: no revision given (a branch, tag or commit)")

    @property
    def repo_type(self) -> str:
        return self.kind

    def describe(self) -> str:
        what = "backbone" if self.kind == "model" else "dataset"
        return f"{what} {self.label} ({self.repo})" if self.label else f"{what} {self.repo}"

    def page(self) -> str:
        """The repo's page on the endpoint the fetch used."""
        base = (self.endpoint or _default_endpoint()).rstrip("/")
        return f"{base}/{'datasets/' if self.kind == 'dataset' else ''}{self.repo}"


def _default_endpoint() -> str:
    """huggingface_hub's endpoint (``HF_ENDPOINT`` when it was imported), else the hub's."""
    try:
        from huggingface_hub import constants
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return DEFAULT_ENDPOINT
    return constants.ENDPOINT


def gated_error(target: Target) -> GatedRepo:
    """A gated repo that this machine has no token with access to, and the fix."""
    return GatedRepo(f"{target.describe()} is gated and the hub refused it without a token "
                    f"that has access: accept its licence at {target.page()}, then "
                    f"{TOKEN_FIX}")


def explain(err: Exception, target: Target, refs: list[str] | None) -> HubError:
    """One :class:`HubError` for ``err`` raised while reaching ``target``.

    ``refs`` are the repo's branch and tag names when the server listed them (the repo
    exists), None when it did not.
    """
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    name, rev = target.describe(), target.revision
    if isinstance(err, GatedRepoError):
        return gated_error(target)
    status = getattr(getattr(err, "response", None), "status_code", None)
    # A repo that exists refusing a revision: 404 (the hub), 401 (olah). Any other status
    # (429, 5xx, 403) is the server's trouble, not the revision's: said as it is, below.
    refused = isinstance(err, (RepositoryNotFoundError, RevisionNotFoundError)) or status in (
        401, 404)
    known = ", ".join((refs or [])[:10]) or "none"
    fix = ("set the entry's revision to an existing branch, tag or full commit hash, and "
           "lock it again if it names a branch")
    if refused and isinstance(err, HfHubHTTPError) and refs is not None and rev not in refs:
        return HubError(f"{name} has no revision {rev!r} (its branches and tags: {known}): "
                        f"{fix}")
    if isinstance(err, HfHubHTTPError) and refs is not None and rev not in refs:
        # olah answers a commit it lacks with 500; the hub, in trouble, too: say both
        return HubError(f"{name} has no revision {rev!r} (its branches and tags: {known}), "
                        f"or the hub failed: it answered {status} for that revision. If the "
                        f"revision is wrong, {fix}; if it is right, try again later")
    if isinstance(err, RepositoryNotFoundError) or (
            isinstance(err, HfHubHTTPError) and refs is None and status in (401, 404)):
        return HubError(f"{name}: the hub at {target.page()} shows no such repo to this "
                        "machine. Check the id in the config; if the repo is private or "
                        f"gated, {TOKEN_FIX}")
    if isinstance(err, (OfflineModeIsEnabled, ConnectionError, TimeoutError)) or \
            type(err).__module__.startswith(("httpx", "httpcore")):
        return HubError(f"{name}: cannot reach the hub at {target.page()} ({err}). Run the "
                        "fetch where the network is (the login node), or point HF_ENDPOINT "
                        "at a reachable mirror")
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return HubError(f"{name} at revision {rev!r}: the hub answered {status or '?'}: {first}")
