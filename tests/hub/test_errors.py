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
def test_a_server_in_trouble_is_said_as_it_is_not_as_a_wrong_revision(status):
    text = str(explain(http_error(status), TARGET, refs=["main"]))
    assert "has no revision" not in text
    assert text.startswith(f"backbone qwen2.5-7b (Qwen/Qwen2.5-7B) at revision '{COMMIT}': "
                           f"the hub answered {status}: {status} Client Error")


@pytest.mark.parametrize("err", [http_error(404, RevisionNotFoundError), http_error(404),
                                 http_error(401)])
def test_a_revision_a_known_repo_refuses_is_a_wrong_revision(err):
    text = str(explain(err, TARGET, refs=["main", "v1"]))
    assert f"has no revision '{COMMIT}' (its branches and tags: main, v1)" in text
