"""The Mirror (SPEC §5): how a person sees, and corrects, what the assistant
believes about them.

`views` holds what every mode shares; `audit`, `gutcheck`, `interview` and
`portrait` compute each mode's figures and lists as pure functions over a
Snapshot; `data` turns them into JSON, `render` into markdown, and `llm`
optionally asks Claude to write the portrait's prose from the same brief.
Only `gutcheck` writes, and only through `epimem.api.memory`: answers and
the reviews they complete.
"""
