"""The services' context (`api/service.Service`): what a service is given instead of the facade."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from vaults import new_vault

from epimem.api.memory import Memory
from epimem.api.service import Service, open_service
from epimem.mirror.gutcheck import answer, open_gut_check

TODAY = "2026-11-30"


def test_a_service_is_frozen_and_the_facade_is_one(vault):
    s = open_service(vault.root, TODAY)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.vault = vault.vault  # type: ignore[misc]
    assert isinstance(vault, Service) and not isinstance(s, Memory)
    assert (s.root, s.today, s.write_today, s.replayed, s.params) == (
        vault.root, vault.today, vault.write_today, vault.replayed, vault.params)
    # Compared by identity, as a Memory always was: two readers of one folder are two.
    assert s != open_service(vault.root, TODAY) and Memory(vault.root) != Memory(vault.root)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".epimem")}


def _beliefs(mem: Memory) -> tuple[str, ...]:
    a = mem.add_belief(title="Likes puzzles", statement="Likes puzzles.", kind="trait", basis="interpretive",
                       permanence="durable", confidence=0.6).id
    b = mem.add_belief(title="Avoids meetings", statement="Avoids meetings.", kind="trait",
                       basis="interpretive", permanence="durable", confidence=0.3).id
    c = mem.add_belief(title="Drinks tea", statement="Drinks tea.", kind="trait", basis="interpretive",
                       permanence="durable", confidence=0.5).id
    return a, b, c


def _gut_check(mem: Service, ids: tuple[str, ...]) -> None:
    a, b, c = ids
    open_gut_check(mem, ids)
    answer(mem, a, "true", note="still")
    answer(mem, b, "false", note="not any more")
    answer(mem, c, "unsure")


def test_a_service_given_a_bare_context_writes_what_it_writes_given_the_facade(tmp_path):
    # The gut-check's answers called the facade (belief, reinforce, reject, record_review) and now
    # call the services; given a Service that is not a Memory they write the same bytes.
    facade = new_vault(tmp_path / "facade", today=TODAY)
    _gut_check(facade, _beliefs(facade))
    bare = new_vault(tmp_path / "bare", today=TODAY)
    _gut_check(open_service(bare.root, TODAY), _beliefs(bare))
    got, want = _files(bare.root), _files(facade.root)
    assert "reviews/2026-11-30.md" in want
    assert got.keys() == want.keys()
    different = [k for k in want if got[k] != want[k]]
    assert not different
