"""Tab completion for bash, zsh and fish, made from the commands' declarations (`cli.spec`).

The script a shell loads is small and fixed: at each TAB it runs `epimem __complete SHELL --
WORD...` (the words up to the cursor), and this module answers from the one
declaration: commands, options, an option's choices, the ids of the vault's beliefs and
tensions, or "complete a file name here". A new command or option is completed as soon as it
is declared; an upgraded epimem needs no new script.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .spec import COMMANDS, Arg, Command, Opt, command

SHELLS = ("bash", "zsh", "fish")
MARK = "# epimem: tab completion (epimem --install-completion)"

BASH = r'''# epimem tab completion for bash: `epimem completion bash` prints this.
_epimem_completion() {
    local cur="${COMP_WORDS[COMP_CWORD]}" kind value
    COMPREPLY=()
    while IFS=$'\t' read -r kind value _; do
        case "$kind" in
            file) compopt -o filenames 2>/dev/null; COMPREPLY+=($(compgen -f -- "$cur")) ;;
            dir) compopt -o filenames 2>/dev/null; COMPREPLY+=($(compgen -d -- "$cur")) ;;
            plain) COMPREPLY+=("$value") ;;
        esac
    done < <("${COMP_WORDS[0]}" __complete bash -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -o nosort -F _epimem_completion epimem
'''

ZSH = r'''#compdef epimem
# epimem tab completion for zsh: `epimem completion zsh` prints this.
_epimem() {
    local -a descs
    local line kind value help out
    out=$("${words[1]}" __complete zsh -- "${(@)words[2,CURRENT]}" 2>/dev/null)
    for line in "${(@f)out}"; do
        kind=${line%%$'\t'*}; line=${line#*$'\t'}
        value=${line%%$'\t'*}; help=${line#*$'\t'}
        case $kind in
            file) _files; return ;;
            dir) _files -/; return ;;
            plain) descs+=("${value//:/\\:}:${help}") ;;
        esac
    done
    (( ${#descs} )) && _describe -V epimem descs
}
if [[ "${funcstack[1]}" = "_epimem" ]]; then
    _epimem "$@"
else
    compdef _epimem epimem
fi
'''

FISH = r'''# epimem tab completion for fish: `epimem completion fish` prints this.
function __epimem_complete
    set -l words (commandline -opc) (commandline -ct)
    set -l program $words[1]
    set -e words[1]
    for line in (command $program __complete fish -- $words 2>/dev/null)
        set -l parts (string split \t -- $line)
        switch $parts[1]
            case file
                __fish_complete_path (commandline -ct)
            case dir
                __fish_complete_directories (commandline -ct)
            case plain
                printf '%s\t%s\n' $parts[2] $parts[3]
        end
    end
end
complete -c epimem -f -a '(__epimem_complete)'
'''

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH}


def script(shell: str) -> str:
    return SCRIPTS[shell]


def user_shell() -> str | None:
    name = Path(os.environ.get("SHELL") or "").name
    return name if name in SHELLS else None


# --- installing -------------------------------------------------------------------------------

def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def _config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def targets(shell: str) -> tuple[Path, Path | None, str | None]:
    """(where the script goes, the rc file that must load it or None, the line that does)."""
    if shell == "bash":
        # bash-completion loads this on demand; the rc line makes it work without bash-completion.
        path = _data_home() / "bash-completion" / "completions" / "epimem"
        return path, Path.home() / ".bashrc", f"[ -f {_home_relative(path)} ] && . {_home_relative(path)}"
    if shell == "zsh":
        zdot = Path(os.environ.get("ZDOTDIR") or Path.home())
        path = zdot / ".zfunc" / "_epimem"
        return path, zdot / ".zshrc", ("autoload -Uz compinit; (( $+functions[compdef] )) || compinit; "
                                       f"source {_home_relative(path)}")
    if shell == "fish":
        return _config_home() / "fish" / "completions" / "epimem.fish", None, None  # fish autoloads it
    raise ValueError(shell)


def _home_relative(path: Path) -> str:
    home = str(Path.home())
    s = str(path)
    return "~" + s[len(home):] if s.startswith(home + os.sep) else s


def install_script(shell: str) -> list[str]:
    """Write the script where the shell finds it (and the rc line that loads it); what was done."""
    from ..store.files import atomic_write

    path, rc, line = targets(shell)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, script(shell))
    said = [f"wrote {path}"]
    if rc is not None and line is not None:
        old = rc.read_text(encoding="utf-8") if rc.exists() else ""
        if MARK not in old:
            sep = "" if not old or old.endswith("\n") else "\n"
            atomic_write(rc, f"{old}{sep}{MARK}\n{line}\n")
            said.append(f"added to {rc}: {line}")
        else:
            said.append(f"{rc} already loads it")
    return said


# --- answering a TAB --------------------------------------------------------------------------

def _global_options() -> tuple[Opt, ...]:
    from .registry import GLOBAL

    return GLOBAL


def _ids(vault: str | None, folder: str) -> list[str]:
    from ..store.paths import note_entries, resolve_root

    try:
        return sorted(e.name[:-3] for e in note_entries(resolve_root(vault) / folder))
    except OSError:
        return []


def _values(o: Opt, incomplete: str, vault: str | None) -> list[tuple[str, str, str]]:
    if o.complete in ("file", "dir"):
        return [(o.complete, "", "")]
    if o.complete in ("belief", "tension"):
        return [("plain", i, o.complete) for i in _ids(vault, o.complete + "s") if i.startswith(incomplete)]
    if o.choices:
        return [("plain", c, "") for c in o.choices if c.startswith(incomplete)]
    return []


def _options(options: tuple[Opt, ...], incomplete: str) -> list[tuple[str, str, str]]:
    out = []
    for o in options:
        if o.positional or o.hidden:
            continue
        for f in (*o.flags, *o.negative):
            if f.startswith("--") and f.startswith(incomplete):
                out.append(("plain", f, o.help))
    if "--help".startswith(incomplete):
        out.append(("plain", "--help", "Show the help and exit."))
    return out


def complete(words: list[str]) -> list[tuple[str, str, str]]:
    """(kind, value, help) for the last of `words` (the word at the cursor, maybe empty):
    kind "plain" is a value, "file"/"dir" asks the shell to complete a path."""
    from .registry import AREAS, load

    words = list(words)
    incomplete = words.pop() if words else ""
    if words and words[-1] == "=":  # bash splits `--out=x` at the `=`
        words.pop()
    options = _global_options()
    vault = None
    node: Command | None = None
    path: tuple[str, ...] = ()
    positional_seen = 0
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        by_flag = {f: o for o in options for f in (*o.flags, *o.negative)}
        if w.startswith("-") and w != "-":
            name, eq, value = w.partition("=")
            o = by_flag.get(name)
            if o is not None and not o.is_flag and not eq:
                if i >= len(words):
                    return _values(o, incomplete, vault)  # the cursor is on this option's value
                value = words[i]
                i += 1
            if o is not None and o.dest == "vault" and value:
                vault = value
            continue
        if node is None and path == () and w in AREAS:
            load(w)
        candidate = (*path, w)
        if node is not None:
            node.children()  # a group that declares its commands late
        if candidate in COMMANDS and positional_seen == 0:
            path = candidate
            node = COMMANDS[path]
            options = node.options
            continue
        positional_seen += 1
    if incomplete.startswith("-"):
        if "=" in incomplete:
            return []
        return _options(options, incomplete)
    out: list[tuple[str, str, str]] = []
    if node is None:
        from .registry import load_all

        load_all()
        out = [("plain", c.path[0], c.summary) for c in (COMMANDS[(w,)] for w in AREAS if (w,) in COMMANDS)
               if not c.hidden and c.path[0].startswith(incomplete)]
        return out
    if positional_seen == 0:
        out = [("plain", c.path[-1], c.summary) for c in node.children()
               if not c.hidden and c.path[-1].startswith(incomplete)]
    args = [o for o in node.options if o.positional and not o.hidden]
    if args:
        a = args[min(positional_seen, len(args) - 1)] if (positional_seen < len(args) or args[-1].multiple) else None
        if a is not None:
            out += _values(a, incomplete, vault)
    return out


# --- the command ----------------------------------------------------------------------------

@command("completion", Arg("shell", required=False, choices=SHELLS, help="bash, zsh or fish (default: $SHELL's)."),
         Opt("--install", type=bool, help="Install it where the shell finds it (and the line in ~/.bashrc or "
                                          "~/.zshrc that loads it), instead of printing it."))
def completion_cmd(ctx, shell, install=False):
    """Tab completion for bash, zsh and fish: print the script, or install it with --install."""
    from .common import echo, fail, usage

    shell = shell or user_shell()
    if shell is None:
        usage(f"give the shell: one of {', '.join(SHELLS)} ($SHELL is {os.environ.get('SHELL') or 'not set'})")
    if not install:
        sys.stdout.write(script(shell))
        return
    try:
        said = install_script(shell)
    except OSError as e:
        fail(f"cannot install the {shell} completion: {e}")
    for line in said:
        echo(line)
    echo(f"Open a new {shell} to use it.")


@command("__complete", Arg("shell", choices=SHELLS, help="The shell asking."),
         Arg("words", multiple=True, required=False, help="The words up to the cursor, the last one at it."),
         hidden=True)
def complete_cmd(ctx, shell, words):
    """Answer a TAB: one `kind<TAB>value<TAB>help` line a candidate (what the scripts run)."""
    for kind, value, help_ in complete(list(words)):
        sys.stdout.write(f"{kind}\t{value}\t{' '.join(help_.split())}\n")
