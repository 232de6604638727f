"""Rule 23: secrets never leave redacted, whatever the file's state.

The reproduction of issue 24 (item 8): a token typed by hand into a belief file that is not
yet committed reached `export`, MCP `get`/`list`/`epimem://belief/…`, `belief show`, the page,
the recall index's `table.json` terms and a Chroma server's metadata. Here a model types
secrets into a belief, the month's observation log and a tension with its Edit tool, and every
front end reads them back; nothing it returns, and nothing the index or any cache under
`.epimem/` stores, holds one.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from readers_support import edit_in_place, export_records, hook_context, mcp_reads, page

# Mixed case, so that a lowercased index term is caught too.
TOKEN = "ghp_Zq7Xw9Pk3Lm5Nb8Vc2Rt6Yu1Io4Ea0Sd3Fg7Hj"
KEY = "sk-ant-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk"
SECRETS = (TOKEN, KEY)


def leaks(text: str) -> list[str]:
    low = text.lower()
    return [s for s in SECRETS if s.lower() in low or s[4:].lower() in low]


def stored_leaks(root: Path) -> list[str]:
    """Every file epimem keeps beside the vault (parse caches, the context, the recall index and
    its Chroma store, the page), searched as bytes."""
    out = []
    for p in sorted((root / ".epimem").rglob("*")):
        if p.is_file():
            data = p.read_bytes().lower()
            out += [f"{p.relative_to(root)}: {s}" for s in SECRETS if s[4:].lower().encode() in data]
    return out


@pytest.fixture
def typed(vault, monkeypatch):
    """A committed belief, an observation and a tension; then the model types secrets into each by hand."""
    monkeypatch.setenv("EPIMEM_CHROMA_UPDATE", "wait")  # Chroma is written before the command returns
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand rather than through an ORM.",
                     kind="preference", basis="behavioral", permanence="durable")
    vault.observe([{"connects": "avoids-orms", "strength": "contradicting", "session": "s1",
                    "evidence": "Reached for the ORM to write a migration."}])
    root = vault.root
    edit_in_place(root / "beliefs" / "avoids-orms.md", "title: Avoids ORMs", f"title: Avoids ORMs {KEY}")
    edit_in_place(root / "beliefs" / "avoids-orms.md", "rather than through an ORM.",
                  f"rather than through an ORM. CI token: {TOKEN}")
    [log] = (root / "observations").glob("*.md")
    edit_in_place(log, "Reached for the ORM", f"Reached for the ORM (token {TOKEN})")
    [tension] = (root / "tensions").glob("*.md")
    edit_in_place(tension, "- what happened: ", f"- what happened: pasted {TOKEN}; ")
    return vault


@pytest.mark.seed_rules
def test_the_cli_readers_redact(cli, typed):
    v = typed.root
    for args in (("belief", "show", "avoids-orms"), ("belief", "show", "avoids-orms", "--json"),
                 ("belief", "list"), ("belief", "list", "--json"), ("tensions", "--json"),
                 ("recall", "orms sql", "--json", "--observations"), ("recall", "orms sql", "--budget-tokens", "300"),
                 ("mirror", "audit"), ("mirror", "portrait", "--json"), ("mirror", "interview", "--json"),
                 ("skill", "observe")):
        r = cli("--vault", v, *args)
        assert r.code == 0, (args, r.err)
        assert not leaks(r.out + r.err), args
    assert "[REDACTED:github-token]" in cli("--vault", v, "belief", "show", "avoids-orms").out
    assert "confidence: 0.30" in (v / "beliefs" / "avoids-orms.md").read_text()  # the file itself is the user's


def test_export_redacts_every_record(cli, typed):
    recs = export_records(cli, typed.root)
    assert not leaks(json.dumps(recs))
    [b] = [r for r in recs if r["type"] == "belief"]
    assert "[REDACTED:anthropic-key]" in b["title"] and "[REDACTED:github-token]" in b["text"]
    assert any("[REDACTED:github-token]" in r.get("evidence", "") for r in recs if r["type"] == "observation")


def test_mcp_readers_redact(typed):
    reads = anyio.run(mcp_reads, typed.root, "avoids-orms")
    for name, text in reads.items():
        assert not leaks(text), name


def test_the_hook_and_the_page_redact(cli, typed, tmp_path):
    assert not leaks(hook_context(typed.root, tmp_path))
    assert not leaks(page(cli, typed.root, tmp_path))


def test_the_index_and_every_cache_store_no_secret(cli, typed, tmp_path):
    v = typed.root
    for args in (("index", "rebuild"), ("recall", "orms"), ("belief", "list"), ("mirror", "page", "--out",
                                                                               str(tmp_path / "p.html"))):
        assert cli("--vault", v, *args).code == 0, args
    hook_context(v, tmp_path)
    table = json.loads((v / ".epimem" / "recall" / "table.json").read_text())
    assert "redact" in table["terms"] and not leaks(" ".join(table["terms"]))
    assert (v / ".epimem" / "chroma").is_dir()  # the embedded Chroma store was written, and is searched too
    assert stored_leaks(v) == []
    # A secret typed later is redacted by the index's sync, not only by a rebuild.
    edit_in_place(v / "beliefs" / "avoids-orms.md", "CI token:", f"CI token: {KEY} and")
    assert cli("--vault", v, "index", "sync").code == 0
    assert stored_leaks(v) == []


@pytest.mark.slow
def test_a_chroma_server_stores_no_secret(cli, typed, tmp_path):
    import chromadb
    from recall_support import start_chroma_server, stop

    proc, url = start_chroma_server(tmp_path / "chroma-data")
    try:
        assert cli("--vault", typed.root, "index", "rebuild", "--chroma-url", url).code == 0
        client = chromadb.HttpClient(host=url.split("://")[1].split(":")[0], port=int(url.rsplit(":", 1)[1]))
        seen = []
        for c in client.list_collections():
            got = client.get_collection(c.name if hasattr(c, "name") else c).get(include=["metadatas", "documents"])
            seen.append(json.dumps(got, default=str))
        assert seen and not leaks(" ".join(seen))
    finally:
        stop(proc)
