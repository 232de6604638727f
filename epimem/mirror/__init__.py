"""The Mirror (SPEC §5): how a person sees, and corrects, what the assistant
believes about them.

`analysis` computes every figure and list as pure functions over a Snapshot;
`render` turns them into markdown; `llm` optionally asks Claude to write the
portrait's prose from the same brief. Nothing here writes to the vault: the
CLI records reviews and answers through `epimem.api.memory`.
"""
