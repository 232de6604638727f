"""The review inbox on the live mirror page (`epimem mirror serve`): each proposal with accept and
reject buttons, forms that POST the token; driven over real HTTP on loopback."""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request

import pytest
from inbox_support import belief_bytes, require_review

BELIEF = "prefers-small-pull-requests"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **kw):
        return None


def _call(url, data: dict | None = None, headers: dict | None = None):
    body = urllib.parse.urlencode(data, doseq=True).encode() if data is not None else None
    req = urllib.request.Request(url, data=body, headers=headers or {}, method="POST" if body is not None else "GET")
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(req, timeout=10) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


@pytest.fixture
def served(vault):
    from epimem.mirror.serve import Server

    vault.add_belief(title="Prefers small pull requests", statement="Splits work into small, reviewable PRs.",
                     kind="workflow", basis="behavioral", permanence="durable")
    require_review(vault)
    srv = Server(vault, port=0).start()
    yield vault, srv
    srv.close()


def _propose(vault, text: str, session: str) -> str:
    rep = vault.observe([{"connects": BELIEF, "strength": "confirming", "evidence": text, "session": session}],
                        source="agent", origin="mcp")
    return rep.proposed[0]


@pytest.mark.seed_rules
def test_the_page_shows_proposals_and_its_buttons_decide_with_the_token(served):
    vault, srv = served
    first = _propose(vault, "Split the PR in three.", "s1")
    second = _propose(vault, "Split the docs off.", "s2")
    srv.live.rebuild()
    status, page, _ = _call(srv.url)
    assert status == 200 and 'id="inbox"' in page and first in page and second in page
    assert "0.30 → 0.35" in page  # what accepting would do, from the rules
    forms = re.findall(r'<form method="post" action="(/inbox/(?:accept|reject))"', page)
    assert forms.count("/inbox/accept") == 2 and forms.count("/inbox/reject") == 2
    base = f"http://127.0.0.1:{srv.port}"
    before = belief_bytes(vault.root)
    # without the token, with a wrong one, from another origin, or by GET: nothing happens
    assert _call(base + "/inbox/accept", {"id": first})[0] == 403
    assert _call(base + "/inbox/accept", {"id": first, "token": "wrong"})[0] == 403
    assert _call(base + "/inbox/accept", {"id": first, "token": srv.token},
                 {"Origin": "http://evil.example"})[0] == 403
    assert _call(base + "/inbox/accept", {"id": first, "token": srv.token},
                 {"Host": f"evil.example:{srv.port}"})[0] == 403
    assert _call(f"{base}/inbox/accept?token={srv.token}&id={first}")[0] == 404
    assert _call(base + "/", {"id": first, "token": srv.token})[0] == 405
    assert belief_bytes(vault.root) == before
    # the buttons, as the browser sends them
    status, _, headers = _call(base + "/inbox/accept", {"id": first, "token": srv.token, "do": "accept"},
                               {"Origin": base})
    assert status == 303 and headers["Location"].startswith("/?token=")
    assert vault.belief(BELIEF).confidence == 0.35
    status, _, _ = _call(base + "/inbox/reject", {"id": second, "token": srv.token, "do": "reject"})
    assert status == 303
    assert (vault.root / "inbox" / "rejected" / f"{second}.md").is_file()
    assert vault.belief(BELIEF).confidence == 0.35
    # a decision on what is gone is refused, and says why
    status, body, _ = _call(base + "/inbox/accept", {"id": first, "token": srv.token})
    assert status == 409 and "no proposal" in body
    page = _call(srv.url)[1]
    assert "Nothing waits for your review." in page


@pytest.mark.seed_rules
def test_a_post_whose_origin_is_null_decides_nothing(served):
    """A sandboxed frame or a data: page says `Origin: null`; the served page sends its own origin
    (Referrer-Policy same-origin), so "null" is refused even with the token."""
    vault, srv = served
    pid = _propose(vault, "Split the PR in three.", "s1")
    base = f"http://127.0.0.1:{srv.port}"
    status, _, headers = _call(srv.url)
    assert headers["Referrer-Policy"] == "same-origin"
    assert _call(base + "/inbox/accept", {"id": pid, "token": srv.token}, {"Origin": "null"})[0] == 403
    assert vault.belief(BELIEF).confidence == 0.30


def _edit_evidence(vault, pid: str, old: str, new: str) -> None:
    path = vault.root / "inbox" / f"{pid}.md"
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


@pytest.mark.seed_rules
def test_a_proposal_edited_after_the_page_showed_it_is_not_accepted_unseen(served):
    """Rule 22: the user decides on what they were shown. A model with a file tool (or a hand in
    an editor) rewrites the proposal between the page's render and the click: the click is refused
    and says so; after a reload, the button accepts what the file says now."""
    vault, srv = served
    pid = _propose(vault, "Split the PR in three.", "s1")
    srv.live.rebuild()
    base = f"http://127.0.0.1:{srv.port}"
    page = _call(srv.url)[1]
    seen = re.search(rf'name="id" value="{pid}"><input type="hidden" name="seen" value="([0-9a-f]+)"', page)[1]
    _edit_evidence(vault, pid, "Split the PR in three.", "Asked for one enormous PR.")
    before = belief_bytes(vault.root)
    for verb in ("accept", "reject"):
        status, body, _ = _call(f"{base}/inbox/{verb}", {"id": pid, "token": srv.token, "seen": seen, "do": verb})
        assert status == 409 and "changed after it was shown to you" in body, body
    assert belief_bytes(vault.root) == before and (vault.root / "inbox" / f"{pid}.md").is_file()
    srv.live.rebuild()
    page = _call(srv.url)[1]
    assert "Asked for one enormous PR." in page
    fresh = re.search(rf'name="id" value="{pid}"><input type="hidden" name="seen" value="([0-9a-f]+)"', page)[1]
    assert fresh != seen
    status, _, _ = _call(f"{base}/inbox/accept", {"id": pid, "token": srv.token, "seen": fresh, "do": "accept"})
    assert status == 303 and vault.belief(BELIEF).confidence == 0.35
    assert "Asked for one enormous PR." in (vault.root / "observations").joinpath(
        f"{vault.write_today:%Y-%m}.md").read_text(encoding="utf-8")
