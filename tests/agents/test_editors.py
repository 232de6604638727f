"""The text editors under the installers: JSON with comments by span, a TOML table by span."""

from __future__ import annotations

import tomllib

import pytest

from epimem.agents import jsonc, tomlcfg

JSONC = """{
  // the model I use
  "model": "x/y", /* inline */
  "mcp": {
    "docs": {"type": "local", "command": ["docs"]},
  },
}
"""


def test_jsonc_keeps_comments_and_trailing_commas_and_gives_back_every_byte():
    entry = {"type": "local", "command": ["epimem", "mcp"]}
    added = jsonc.set_path(JSONC, ("mcp", "epimem"), entry, comments=True)
    assert "// the model I use" in added and "/* inline */" in added
    assert jsonc.get_path(added, ("mcp", "epimem"), comments=True) == entry
    assert jsonc.get_path(added, ("mcp", "docs"), comments=True) == {"type": "local", "command": ["docs"]}
    assert jsonc.set_path(added, ("mcp", "epimem"), entry, comments=True) == added
    assert jsonc.delete_path(added, ("mcp", "epimem"), comments=True, prune=1) == JSONC


def test_a_wrapper_object_created_for_the_entry_goes_with_it():
    text = '{\n    "theme": "dark"\n}\n'
    added = jsonc.set_path(text, ("mcpServers", "epimem"), {"command": "epimem"})
    assert added == '{\n    "theme": "dark",\n    "mcpServers": {\n        "epimem": {\n' \
                    '            "command": "epimem"\n        }\n    }\n}\n'
    assert jsonc.delete_path(added, ("mcpServers", "epimem"), prune=1) == text


@pytest.mark.parametrize("text, where", [('{\n  "a": 1\n  "b": 2\n}', "line 3"),
                                         ('{\n  // ok\n  "a": /* open', "line 3"),
                                         ('{"a": 1} x', "line 1")])
def test_broken_json_is_refused_with_its_line(text, where):
    with pytest.raises(jsonc.JsonSyntaxError, match=where):
        jsonc.parse_spans(text, comments=True)


def test_strict_json_refuses_comments():
    with pytest.raises(jsonc.JsonSyntaxError, match="line 1"):
        jsonc.parse_spans('{"a": 1 // no\n}')


TOML = '# mine\nmodel = "o3"   # fast\n\n[profiles.work]\nmodel = "o4"\n'


def test_toml_table_added_and_removed_by_span():
    value = {"command": "/opt/bin/epimem", "args": ["--vault", "/v", "mcp"]}
    added = tomlcfg.set_table(TOML, ("mcp_servers", "epimem"), value)
    assert added.startswith(TOML)
    assert tomllib.loads(added)["mcp_servers"]["epimem"] == value
    assert tomllib.loads(added)["profiles"] == {"work": {"model": "o4"}}
    assert tomlcfg.set_table(added, ("mcp_servers", "epimem"), value) == added
    assert tomlcfg.remove_table(added, ("mcp_servers", "epimem")) == TOML
    changed = tomlcfg.set_table(added, ("mcp_servers", "epimem"), {**value, "args": ["mcp"]})
    assert changed.count("[mcp_servers.epimem]") == 1
    assert tomlcfg.remove_table(changed, ("mcp_servers", "epimem")) == TOML


def test_toml_inline_table_is_refused_and_broken_toml_names_its_line():
    with pytest.raises(tomlcfg.TomlError, match="inline"):
        tomlcfg.set_table('mcp_servers = { docs = { command = "d" } }\n', ("mcp_servers", "epimem"),
                          {"command": "e"})
    with pytest.raises(tomlcfg.TomlError, match="line 2"):
        tomlcfg.set_table('a = 1\n[b\n', ("mcp_servers", "epimem"), {"command": "e"})


@pytest.mark.parametrize("text, owner, comment", [
    ('{\n  "ui": {"theme": "GitHub"}  // my theme\n}\n', '  "ui": {"theme": "GitHub"}', "// my theme"),
    ('{\n  "ui": {"theme": "GitHub"}, // my theme\n  "general": {"vim": true} /* keys */\n}\n',
     '  "general": {"vim": true}', "/* keys */"),
    ('{\n  "mcpServers": {\n    "docs": {"command": "docs-mcp"} // the docs server\n  }\n}\n',
     '    "docs": {"command": "docs-mcp"}', "// the docs server"),
])
def test_a_comment_ending_the_last_line_stays_on_that_line(text, owner, comment):
    """Gemini CLI's settings.json: the entry goes below a comment that ends the last entry's line,
    never between the entry and its comment; the uninstall gives back every byte."""
    added = jsonc.set_path(text, ("mcpServers", "epimem"), {"command": "e", "args": ["mcp"]}, comments=True)
    line = next(line for line in added.splitlines() if comment in line)
    assert line.startswith(owner) and line.endswith(comment), added
    assert jsonc.get_path(added, ("mcpServers", "epimem"), comments=True) == {"command": "e", "args": ["mcp"]}
    assert jsonc.delete_path(added, ("mcpServers", "epimem"), comments=True, prune=1) == text
