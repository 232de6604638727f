"""`epimem mirror serve`: the visual mirror, live, on 127.0.0.1 (SPEC §13).

Read-only but for the user's decisions on the review inbox (SPEC §15): the server
answers GET and HEAD for two paths, the page (`/`) and its version (`/version`,
what the page polls to know it is stale), and POST for two, `/inbox/accept` and
`/inbox/reject` (the page's buttons: a form carrying the token and the proposal's
id, answered by a redirect back to the page); every other method or path gets 405
and no other handler writes anything but the rebuildable page cache under `.epimem/`.
The inbox's section is added to the page here, not by `mirror page`: a static file
has no server to take a decision.

Every request must carry the token printed with the address (`?token=`):
the page shows everything believed about a person, so another local user, or
a web page the browser visits, must not read it. The Host header must name
the address the server is bound to, which stops DNS rebinding.

A watcher thread (watchfiles) rebuilds the page when a vault file changes or
git moves (a commit, an undo); the page polls `/version` twice a second and
reloads itself when the version changed.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import secrets
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from .page import build

if TYPE_CHECKING:
    from ..api.service import Service

LOOPBACK = "127.0.0.1"
POLL_MS = 500

_LIVE = """<script>
// epimem mirror serve: reload when the vault changed. Asks only this server, never another.
(function () {
  var version = %(version)s, token = %(token)s;
  function poll() {
    fetch("/version?token=" + encodeURIComponent(token), {cache: "no-store"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (v) { if (v && v.version !== version) { location.reload(); } else { setTimeout(poll, %(ms)d); } })
      .catch(function () { setTimeout(poll, %(ms)d * 4); });
  }
  setTimeout(poll, %(ms)d);
})();
</script>"""


class Live:
    """The current page and its version, rebuilt on demand; safe across threads."""

    def __init__(self, mem: Service, token: str, **options):
        self.mem, self.token, self.options = mem, token, options
        self._lock = threading.Lock()
        self.version = ""
        self.html = ""
        self.error = ""
        self.rebuild()

    def rebuild(self) -> bool:
        """Build again; False (and the last good page kept) when the build failed."""
        with self._lock:
            try:
                built = build(self.mem, **self.options)
            except Exception as e:  # a half-saved file, git busy: keep serving the last good page
                self.error = f"{type(e).__name__}: {e}"
                return False
            self.error = ""
            try:
                section = inbox_section(self.mem, self.token)
            except Exception as e:  # an unreadable proposal must not take the page down
                section = f'<section id="inbox"><h2>Review inbox</h2><p>{html.escape(str(e))}</p></section>'
            version = built.key + ":" + hashlib.sha1(section.encode()).hexdigest()[:12]
            if version != self.version:
                live = _LIVE % {"version": json.dumps(version), "token": json.dumps(self.token), "ms": POLL_MS}
                self.version = version
                page = built.html.replace("<!--epimem-live-->", section + live, 1)
                if section:  # the buttons' forms post to this server; the static page posts nowhere
                    page = page.replace("form-action 'none'", "form-action 'self'", 1)
                self.html = page
            return True


def inbox_section(mem: Service, token: str) -> str:
    """The review inbox as the live page shows it: each proposal as the diff accepting it would
    make, with an accept and a reject button (forms posting the token; nothing runs on a GET)."""
    from ..api import inbox
    from ..core import inbox as core_inbox

    if mem.params.review != "required" and not inbox.count_pending(mem):
        return ""
    previews, problems = inbox.previews(mem)
    esc = html.escape
    out = ['<section id="inbox" class="inbox"><h2>Review inbox</h2>']
    if not previews:
        out.append("<p>Nothing waits for your review.</p>")
    for pv in previews:
        p, o = pv.proposal, pv.proposal.observation
        out.append(f'<article class="proposal" id="{esc(p.id)}"><h3>{esc(p.id)}</h3>')
        if p.kind == "import":
            out.append(f"<p>From <code>epimem import {esc(p.importer)}</code> ({esc(p.source)}), {p.proposed}: "
                       f"{esc(', '.join(r.path for r in p.records))}</p>")
        else:
            sess = ", session " + esc(p.session) if p.session else ""
            out.append(f"<p>From {esc(p.origin)} ({esc(p.source)}{sess}), "
                       f"{p.proposed}: <b>{esc(str(o.get('strength', '')))}</b> → {esc(str(o.get('connects', '')))} — "
                       f"{esc(str(o.get('evidence', '')))}</p>")
        if pv.refused:
            out.append(f'<p class="refused">Accepting it today would be refused: {esc(pv.refused)}</p>')
        for b in pv.beliefs:
            out.append(f'<p class="effect">Would write the belief {esc(b.id)} “{esc(b.title)}”: {esc(b.basis)}, '
                       f"{b.confidence:.2f} ({esc(mem.params.tier(b.confidence, b.basis))})</p>")
        for n in pv.notes:
            out.append(f'<p class="effect">{esc(n)}</p>')
        for r in pv.results:
            moved = (f" {r.before:.2f} → {r.after:.2f}" if r.before is not None and r.after is not None
                     and r.before != r.after else "")
            out.append(f'<p class="effect">{esc(r.belief or "unconnected")}{moved}: {esc(r.reason)}</p>')
        for c in pv.changes:
            out.append(f'<details><summary>{esc(c.action)} {esc(c.path)}</summary><pre>{esc(c.diff)}</pre></details>')
        for verb in ("accept", "reject"):
            out.append(f'<form method="post" action="/inbox/{verb}" class="decide">'
                       f'<input type="hidden" name="token" value="{esc(token)}">'
                       f'<input type="hidden" name="id" value="{esc(p.id)}">'
                       f'<input type="hidden" name="seen" value="{core_inbox.fingerprint(p)}">'
                       f'<button type="submit" name="do" value="{verb}">{verb.capitalize()}</button></form>')
        out.append("</article>")
    for x in problems:
        out.append(f'<p class="refused">{esc(x.path)}:{x.line}: {esc(x.message)}</p>')
    out.append("</section>")
    return "".join(out)


def _watch_filter(root: Path) -> Callable[[object, str], bool]:
    internal = str(root / ".epimem")
    objects = str(root / ".git" / "objects")
    index = str(root / ".git" / "index")

    def keep(_change: object, path: str) -> bool:
        # Our own cache writes must not wake us, nor the index `git status` refreshes while
        # a build reads it; git's object store changes with every commit, but HEAD and the
        # refs (which move with it) are enough to notice one.
        return not (path.startswith(internal) or path.startswith(objects) or path == index
                    or path.endswith(".lock"))

    return keep


def watch(live: Live, stop: threading.Event) -> None:
    import watchfiles

    for _changes in watchfiles.watch(live.mem.root, watch_filter=_watch_filter(live.mem.root),
                                     stop_event=stop, debounce=150, step=50, yield_on_timeout=False):
        live.rebuild()


def handler(live: Live, host: str, port: int) -> type[BaseHTTPRequestHandler]:
    allowed_hosts = {f"{host}:{port}", f"localhost:{port}" if host == LOOPBACK else f"{host}:{port}"}

    class Handler(BaseHTTPRequestHandler):
        server_version = "epimem-mirror"
        sys_version = ""

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
            pass  # the terminal shows the address, not every poll

        def _send(self, status: HTTPStatus, body: bytes, ctype: str, head: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            # same-origin, not no-referrer: a form's POST then carries this page's Origin (under
            # no-referrer it says "null", which any sandboxed page also says); nothing else is asked.
            self.send_header("Referrer-Policy", "same-origin")
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _deny(self, status: HTTPStatus, why: str, head: bool = False) -> None:
            self._send(status, (why + "\n").encode(), "text/plain; charset=utf-8", head)

        def _serve(self, head: bool) -> None:
            if self.headers.get("Host", "") not in allowed_hosts:
                return self._deny(HTTPStatus.FORBIDDEN, "wrong Host header", head)
            url = urlsplit(self.path)
            token = parse_qs(url.query).get("token", [""])[0]
            if not hmac.compare_digest(token.encode(), live.token.encode()):
                return self._deny(HTTPStatus.FORBIDDEN, "a token is required: use the address "
                                  "`epimem mirror serve` printed", head)
            if url.path == "/":
                self._send(HTTPStatus.OK, live.html.encode("utf-8"), "text/html; charset=utf-8", head)
            elif url.path == "/version":
                body = json.dumps({"version": live.version, "error": live.error}).encode()
                self._send(HTTPStatus.OK, body, "application/json", head)
            else:
                self._deny(HTTPStatus.NOT_FOUND, "not found", head)

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self._serve(head=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve(head=True)

        def _read_only(self) -> None:
            self.send_response(HTTPStatus.METHOD_NOT_ALLOWED)
            self.send_header("Allow", "GET, HEAD")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_PUT = do_DELETE = do_PATCH = _read_only  # noqa: N815

        def do_POST(self) -> None:  # noqa: N802
            """The user's decision on a proposal: the page's accept and reject buttons."""
            url = urlsplit(self.path)
            if url.path not in ("/inbox/accept", "/inbox/reject"):
                return self._read_only()
            if self.headers.get("Host", "") not in allowed_hosts:
                return self._deny(HTTPStatus.FORBIDDEN, "wrong Host header")
            origin = self.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc not in allowed_hosts:
                return self._deny(HTTPStatus.FORBIDDEN, "a decision comes from this page only")
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= 64 * 1024:
                return self._deny(HTTPStatus.BAD_REQUEST, "a form of at most 64 KiB is expected")
            form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
            token = form.get("token", [""])[0]
            if not hmac.compare_digest(token.encode(), live.token.encode()):
                return self._deny(HTTPStatus.FORBIDDEN, "a token is required: use the page "
                                  "`epimem mirror serve` printed the address of")
            ids = form.get("id", [])
            # What the page showed of each (its buttons send it): one edited since is refused.
            seen = dict(zip(ids, form.get("seen", [])))
            from ..api import inbox

            try:
                if url.path == "/inbox/accept":
                    report = inbox.accept(live.mem, ids, seen)
                    if report.held:
                        raise ValueError(report.results[0].reason)
                else:
                    inbox.reject(live.mem, ids, form.get("note", [""])[0], seen)
            except Exception as e:  # a rule's refusal, a proposal gone: said, nothing changed
                live.rebuild()
                return self._deny(HTTPStatus.CONFLICT, f"{type(e).__name__}: {e}")
            live.rebuild()
            self.send_response(HTTPStatus.SEE_OTHER)
            self.send_header("Location", f"/?token={live.token}#inbox")
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


class Server:
    """The page server and its watcher; `start()` returns at once, `close()` stops both."""

    def __init__(self, mem: Service, *, host: str = LOOPBACK, port: int = 0, token: str | None = None,
                 **options):
        self.token = token or secrets.token_urlsafe(18)
        self.live = Live(mem, self.token, **options)
        self.httpd = ThreadingHTTPServer((host, port), handler(self.live, host, port))
        self.host, self.port = host, self.httpd.server_address[1]
        if port == 0:  # the handler checks the Host header against the port really bound
            self.httpd.RequestHandlerClass = handler(self.live, host, self.port)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/?token={self.token}"

    def start(self) -> Server:
        for target in (self.httpd.serve_forever, lambda: watch(self.live, self._stop)):
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        for t in self._threads:
            t.join(timeout=2)
