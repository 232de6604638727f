"""`epimem hook session-start|session-end`: the hooks Claude Code (and Codex, Gemini CLI) run.

They run before every session, so this module imports only the parser; `epimem.claude.hook`
does the work. A hook never fails a session: what it is given that is not its own is ignored
(`loose`), a bad value is logged and the default used, and every exit is 0.
"""

from __future__ import annotations

from .spec import Arg, Opt, command, group

VAULT = Opt("--vault", metavar="PATH", complete="dir", help="The vault (wins over the global --vault).")

group("hook", "Claude Code hooks (read JSON on stdin, always exit 0).", exit_zero=True)


def _vault(ctx, vault: str | None) -> str | None:
    return vault or ctx.vault  # the hook's own `--vault` (after the event) wins, as a later option does


@command("hook session-start",
         Opt("--budget-tokens", metavar="N",
             help="Tokens of context (default 1300), at 3 characters a token and never over Claude Code's "
                  "limit (docs/claude-code.md)."),
         Opt("--budget", metavar="CHARS", hidden=True, help="Deprecated: characters."),
         VAULT,
         Opt("--today", metavar="YYYY-MM-DD", hidden=True, help="Pretend today is this day."),
         Opt("--via", metavar="plugin", hidden=True, help="Set by the plugin's hook: stand down when "
                                                          "settings.json hooks of epimem's run too."),
         Opt("--skills", metavar="VERSION", hidden=True, help="Set by `epimem install claude-code`: the version "
                                                               "of the skills it installed beside this hook."),
         loose=True)
def hook_session_start(ctx, budget_tokens, budget, vault, today, via, skills):
    """SessionStart: count the session (startup only), print the context as Claude Code's JSON.

    Reads Claude Code's JSON on stdin; always exits 0.
    """
    from ..claude import hook

    raise SystemExit(hook.guarded("session-start", hook.session_start, vault=_vault(ctx, vault),
                                  today=today or ctx.today, budget_tokens=budget_tokens, budget=budget, via=via,
                                  skills=skills))


@command("hook session-end", Opt("--llm", type=bool, help="Also run the Claude pass (ANTHROPIC_API_KEY)."), VAULT,
         loose=True)
def hook_session_end(ctx, llm, vault):
    """SessionEnd: read the transcript in the background and record 0–3 observations."""
    from ..claude import hook

    raise SystemExit(hook.guarded("session-end", hook.session_end, vault=_vault(ctx, vault), llm=llm))


# --- the background workers the hooks start ----------------------------------------------------

@command("hook commit-session", Arg("root", metavar="VAULT", help="The vault."),
         Arg("session", required=False, default="", help="The session id."), hidden=True)
def hook_commit_session(ctx, root, session):
    """Commit the session counter after the hook counted a session."""
    from ..claude import hook

    raise SystemExit(hook.guarded("commit-session", hook.commit_session, root, session, log_root=root))


@command("hook observe-transcript", Arg("path", help="The transcript (JSONL)."), VAULT,
         Opt("--session", metavar="ID", help="The session id."),
         Opt("--llm", type=bool, help="Also run the Claude pass."), hidden=True)
def hook_observe_transcript(ctx, path, vault, session, llm):
    """Record a session's observations from its transcript (what session-end starts)."""
    from ..claude import hook

    root = hook.vault_root(_vault(ctx, vault))
    raise SystemExit(hook.guarded("observe-transcript", hook.observe_transcript, path, root, session or None, llm,
                                  log_root=root))
