"""`--help`, made from the commands' declarations (`cli.spec`), and the usage line a usage error shows."""

from __future__ import annotations

import textwrap

from .spec import Command, Opt

WIDTH = 80
HELP_OPT = Opt("--help", "-h", type=bool, help="Show this message and exit.")


def prog(cmd: Command) -> str:
    return " ".join(("epimem", *cmd.path))


def _arg_usage(o: Opt) -> str:
    s = o.shown_metavar + ("..." if o.multiple else "")
    return s if o.required else f"[{s}]"


def usage(cmd: Command) -> str:
    parts = [prog(cmd)]
    if cmd.path == ():
        parts.append("[--vault PATH] [--today YYYY-MM-DD]")
    elif any(not o.positional for o in cmd.options):
        parts.append("[OPTIONS]")
    parts += [_arg_usage(o) for o in cmd.options if o.positional and not o.hidden]
    if visible_children(cmd):
        parts.append("COMMAND [ARGS]..." if cmd.run is None else "[COMMAND [ARGS]...]")
    return "Usage: " + " ".join(parts)


def visible_children(cmd: Command) -> list[Command]:
    children = [c for c in cmd.children() if not c.hidden]
    if cmd.path == ():
        from .registry import AREAS

        order = list(AREAS)
        children.sort(key=lambda c: order.index(c.path[0]) if c.path[0] in order else len(order))
    return children


def _shown_default(o: Opt) -> str | None:
    if o.is_flag or o.default in (None, "", [], ()) or o.positional or "default" in o.help.lower():
        return None
    return ", ".join(map(str, o.default)) if isinstance(o.default, list) else str(o.default)


def _option_label(o: Opt) -> str:
    flags = ", ".join(sorted(o.flags, key=lambda f: f.startswith("--")))  # -n, --limit
    if o.negative:
        flags += " / " + ", ".join(o.negative)
    return flags if o.is_flag else f"{flags} {o.shown_metavar}"


def _option_help(o: Opt) -> str:
    text = o.help
    extra = []
    if o.multiple and not o.positional and "repeatable" not in text:
        extra.append("repeatable")
    d = _shown_default(o)
    if d is not None:
        extra.append(f"default: {d}")
    if o.envvar:
        extra.append(f"env {o.envvar}")
    if o.required and not o.positional:
        extra.append("required")
    return text + (f" [{'; '.join(extra)}]" if extra else "")


def _table(rows: list[tuple[str, str]]) -> list[str]:
    left = min(max((len(a) for a, _ in rows), default=0), 28) + 4
    out = []
    for a, b in rows:
        wrapped = textwrap.wrap(b, WIDTH - left) or [""]
        if len(a) + 4 > left:
            out.append(f"  {a}")
            out += [" " * left + w for w in wrapped]
        else:
            out.append(f"  {a:<{left - 2}}{wrapped[0]}")
            out += [" " * left + w for w in wrapped[1:]]
    return out


def render(cmd: Command, global_options: tuple[Opt, ...] = ()) -> str:
    """The help of a command or a group (the top level's has the global options too)."""
    lines = [usage(cmd), ""]
    for para in (cmd.help or "").strip().split("\n\n"):
        if para.strip():
            lines += textwrap.wrap(" ".join(textwrap.dedent(para).split()), WIDTH - 2,
                                   initial_indent="  ", subsequent_indent="  ") + [""]
    args = [o for o in cmd.options if o.positional and not o.hidden and o.help]
    if args:
        lines.append("Arguments:")
        lines += _table([(o.shown_metavar, o.help) for o in args]) + [""]
    opts = [o for o in (*global_options, *cmd.options) if not o.positional and not o.hidden] + [HELP_OPT]
    lines.append("Options:")
    lines += _table([(_option_label(o), _option_help(o)) for o in opts])
    children = visible_children(cmd)
    if children:
        lines += ["", "Commands:"]
        lines += _table([(c.path[-1], c.summary) for c in children])
    return "\n".join(lines) + "\n"


def print_help(cmd: Command, global_options: tuple[Opt, ...] = (), err: bool = False) -> None:
    import sys

    stream = sys.stderr if err else sys.stdout
    stream.write(render(cmd, global_options))
    stream.flush()
