"""dfil.hub.errors.explain: each hub answer as one line naming the entry and the fix; a
busy or failing server is never told as a wrong revision."""

from __future__ import annotations

import httpx
import pytest
from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError

from dfil.hub.errors import Target, explain

COMMIT = "a" * 40
TARGET = Target("model", "Qwen/Qwen2.5-7B", COMMIT, label="qwen2.5-7b")


def http_error(status: int, cls=HfHubHTTPError) -> HfHubHTTPError:
    response = httpx.Response(status, request=httpx.Request("GET", "http://hub.test/x"))
    return cls(f"{status} Client Error", response=response)


@pytest.mark.parametrize("status", [429, 500, 503, 403])
def test_a_server_in_trouble_is_not_said_as_only_a_wrong_revision(status):
    """The revision may be right and the hub busy (429) or failing (5xx): the line says
    both, and what to do for each (olah answers a commit it lacks with 500)."""
    text = str(explain(http_error(status), TARGET, refs=["main"]))
    assert text == (f"backbone qwen2.5-7b (Qwen/Qwen2.5-7B) has no revision '{COMMIT}' (its "
                    f"branches and tags: main), or the hub failed: it answered {status} for "
                    "that revision. If the revision is wrong, set the entry's revision to an "
                    "existing branch, tag or full commit hash, and lock it again if it names "
                    "a branch; if it is right, try again later")
    # a repo whose refs the hub did not list: the answer as it is
    assert str(explain(http_error(status), TARGET, refs=None)).startswith(
        f"backbone qwen2.5-7b (Qwen/Qwen2.5-7B) at revision '{COMMIT}': the hub answered "
        f"{status}: {status} Client Error")


@pytest.mark.parametrize("err", [http_error(404, RevisionNotFoundError), http_error(404),
                                 http_error(401)])
def test_a_revision_a_known_repo_refuses_is_a_wrong_revision(err):
    text = str(explain(err, TARGET, refs=["main", "v1"]))
    assert f"has no revision '{COMMIT}' (its branches and tags: main, v1)" in text
