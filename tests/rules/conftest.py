import pytest


@pytest.fixture
def tabs(vault):
    """A vault with one behavioural belief, `likes-tabs`, at 0.30."""
    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    return vault
