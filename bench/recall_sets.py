"""Evaluation sets for recall that show the wrong-subject failure.

A vault that speaks of several people and several projects, plus filler
beliefs from bench/synth.py. Every person has a fact on the same topics (a
pet, an editor, a commute…), worded differently, and every project has its
own belief on the same engineering topics (how it deploys, which database…),
scoped to that project and — as scoped beliefs usually are — without the
project's name in the text. A question names one person or project; the
relevant belief is that subject's, and the distractors are the other
subjects' beliefs on the same topic: on-topic, wrong subject. A semantic
ranker ranks them all alike; only the subject's name tells them apart.

Question types (the `type` of each query):

- `person`      names a person and the topic in the beliefs' own words;
- `person-para` names a person, the topic paraphrased (few shared words);
- `project`     names a project (its scope), topic in the beliefs' words;
- `project-para` names a project, topic paraphrased;
- `paraphrase`  no subject: a paraphrase of one global belief (the
                semantic ranker's home ground; keyword matches are weak).

    from recall_sets import make_vault, queries
    make_vault(root)            # writes beliefs/ (needs an empty or missing root)
    for q in queries(): q["query"], q["relevant"], q["type"]

Small on purpose (~70 subject beliefs, 200 filler beliefs, 120 queries): it
runs in CI as a ranking regression test (tests/recall/test_recall_quality.py).
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

FIRST = date(2026, 9, 1)
TODAY = date(2026, 11, 30)
PEOPLE = ("Priya", "Marcus", "Lena")

# topic: (facts per person, direct question, paraphrased question)
PERSON_TOPICS: dict[str, tuple[dict[str, str], str, str]] = {
    "pet": ({
        "Priya": "Priya has a grey cat called Miso who walks across her keyboard during calls.",
        "Marcus": "Marcus walks his border collie dog Juno every morning before standup.",
        "Lena": "Lena keeps two pet rabbits on her balcony and talks about them often.",
    }, "What pet does {name} have?", "Which animal lives at home with {name}?"),
    "editor": ({
        "Priya": "Priya edits code in Neovim with a hand-written Lua config.",
        "Marcus": "Marcus uses the JetBrains GoLand editor and its debugger for everything.",
        "Lena": "Lena writes code in VS Code with the Vim keybindings extension.",
    }, "Which code editor does {name} use?", "What does {name} type programs into all day?"),
    "commute": ({
        "Priya": "Priya commutes by bike along the canal and arrives at the office around nine.",
        "Marcus": "Marcus commutes by train for an hour and reads papers on the way.",
        "Lena": "Lena works from home and only commutes to the office on Thursdays.",
    }, "How does {name} commute to the office?", "How does {name} get to work in the morning?"),
    "coffee": ({
        "Priya": "Priya drinks oat flat whites and refuses coffee after two in the afternoon.",
        "Marcus": "Marcus drinks black filter coffee, four cups before lunch.",
        "Lena": "Lena gave up coffee and drinks green tea at her desk.",
    }, "How does {name} take their coffee?", "What hot drink does {name} like during the day?"),
    "language": ({
        "Priya": "Priya's favourite programming language is Rust, for its compiler errors.",
        "Marcus": "Marcus's favourite programming language is Go, because it is boring and fast to build.",
        "Lena": "Lena's favourite programming language is Python, which she has taught at meetups.",
    }, "What is {name}'s favourite programming language?", "Which language would {name} pick for a new tool?"),
    "review": ({
        "Priya": "Priya reviews pull requests line by line and leaves many small comments.",
        "Marcus": "Marcus reviews pull requests only for design and approves quickly when the shape is right.",
        "Lena": "Lena reviews pull requests by checking out the branch and running it locally first.",
    }, "How does {name} review pull requests?", "What is {name}'s way of going over a colleague's changes?"),
    "meetings": ({
        "Priya": "Priya prefers meetings before eleven and blocks her afternoons.",
        "Marcus": "Marcus wants an agenda in every meeting invite or he declines it.",
        "Lena": "Lena likes walking meetings and joins calls from her phone.",
    }, "What does {name} expect from meetings?", "How should I book time with {name}?"),
    "feedback": ({
        "Priya": "Priya wants feedback in writing so she can think before answering.",
        "Marcus": "Marcus prefers blunt feedback face to face, right away.",
        "Lena": "Lena asks for feedback with concrete examples in their weekly one-to-one.",
    }, "How does {name} like to get feedback?", "What is the best way to tell {name} their work has a problem?"),
    "holiday": ({
        "Priya": "Priya is on holiday in Lisbon for the last two weeks of December.",
        "Marcus": "Marcus takes his holiday every August and goes hiking in Norway.",
        "Lena": "Lena saves her holiday for a long trip to Japan in spring.",
    }, "When is {name} on holiday?", "When will {name} be away from work on vacation?"),
    "testing": ({
        "Priya": "Priya writes property-based tests with Hypothesis for every parser.",
        "Marcus": "Marcus writes table-driven tests and keeps them next to the code.",
        "Lena": "Lena writes end-to-end tests with Playwright before unit tests.",
    }, "How does {name} write tests?", "What does {name} do to check their code works?"),
    "timezone": ({
        "Priya": "Priya lives in Bangalore, in the India timezone, five and a half hours ahead of London.",
        "Marcus": "Marcus lives in Toronto, in the Eastern timezone.",
        "Lena": "Lena lives in Berlin, in the Central European timezone.",
    }, "Which timezone is {name} in?", "What time of day is it where {name} lives?"),
    "food": ({
        "Priya": "Priya is vegetarian and brings her own lunch on team days.",
        "Marcus": "Marcus is allergic to peanuts and checks every menu for them.",
        "Lena": "Lena eats no gluten and likes the ramen place near the office.",
    }, "Does {name} have any food restrictions?", "What should I keep in mind when ordering dinner for {name}?"),
}

PROJECTS = ("billing-service", "ledger-sync", "atlas-web")
# Project names as a user writes them in a question.
PROJECT_SAID = {"billing-service": "billing-service", "ledger-sync": "ledger-sync", "atlas-web": "atlas-web"}
PROJECT_TOPICS: dict[str, tuple[dict[str, str], str, str]] = {
    "deploy": ({
        "billing-service": "Deploys go out through Argo CD with a manual approval step for production.",
        "ledger-sync": "Deploys are a tagged release that a cron job on the ops box picks up at night.",
        "atlas-web": "Deploys happen on every merge to main through Vercel previews.",
    }, "How are deploys done in {proj}?", "How does a change reach production in {proj}?"),
    "database": ({
        "billing-service": "The database is Postgres 16 with row-level security on the invoices tables.",
        "ledger-sync": "The database is a SQLite file per tenant, copied to object storage hourly.",
        "atlas-web": "There is no database of its own; it reads everything from the GraphQL gateway.",
    }, "Which database does {proj} use?", "Where does {proj} keep its persistent data?"),
    "tests": ({
        "billing-service": "Tests run against a real Postgres in Docker; mocks of the database are rejected in review.",
        "ledger-sync": "Tests replay recorded bank files; a golden-file diff must be empty.",
        "atlas-web": "Tests are Playwright runs against the preview deploy plus Vitest for components.",
    }, "How are tests run in {proj}?", "What checks must pass before merging in {proj}?"),
    "errors": ({
        "billing-service": "Errors are wrapped with the operation and invoice id and returned, never dropped.",
        "ledger-sync": "Errors stop the whole batch and page the on-call engineer; partial syncs are rolled back.",
        "atlas-web": "Errors are shown to the user as a toast and reported to Sentry with the route.",
    }, "How are errors handled in {proj}?", "What happens when something fails in {proj}?"),
    "language": ({
        "billing-service": "The code is Go 1.23 with sqlc for queries.",
        "ledger-sync": "The code is Python 3.12 with type hints checked by mypy in strict mode.",
        "atlas-web": "The code is TypeScript with React Server Components on Next.js.",
    }, "Which programming language is {proj} written in?", "What stack is {proj} built with?"),
    "owner": ({
        "billing-service": "The payments team owns it; Marcus is the tech lead and approves schema changes.",
        "ledger-sync": "The finance platform team owns it; Priya is on call for it this quarter.",
        "atlas-web": "The growth team owns it; Lena decides on anything user-facing.",
    }, "Which team owns {proj}?", "Who should I ask before changing {proj}?"),
    "logging": ({
        "billing-service": "Logging is structured JSON through slog with the request id on every line.",
        "ledger-sync": "Logging writes one summary line per batch and keeps raw bank lines out of the logs.",
        "atlas-web": "Logging in the browser is off in production; server logs go to Datadog.",
    }, "How does logging work in {proj}?", "Where do I look to see what {proj} did?"),
    "release-cadence": ({
        "billing-service": "Releases are weekly on Tuesdays, never on Fridays or during month-end close.",
        "ledger-sync": "Releases are monthly, after the reconciliation report is signed off.",
        "atlas-web": "Releases are continuous; several a day is normal.",
    }, "How often are releases in {proj}?", "Can I ship {proj} today, or is there a schedule?"),
}

# Global beliefs phrased one way, asked another (few shared content words).
PARAPHRASE: list[tuple[str, str, str, str]] = [
    # (id, title, statement, query)
    ("prefers-small-changes", "Splits work into small pull requests",
     "Opens many small pull requests rather than one large one; anything over 400 lines is split.",
     "This feature is huge; should it go up for review in one piece?"),
    ("no-friday-deploys", "Does not ship on Fridays",
     "Never releases to production at the end of the week.",
     "Is it OK to push the new version live on Friday afternoon?"),
    ("explains-root-cause", "Wants the root cause before a fix",
     "Does not accept a fix until the underlying reason for the failure is understood.",
     "The bug is patched but nobody knows why it happened; are they satisfied?"),
    ("terse-replies", "Likes short answers",
     "Wants replies of a few lines that lead with the code.",
     "How long should my response be when they ask something quick?"),
    ("boring-tech", "Chooses proven technology",
     "Picks tools the team already runs over new and fashionable ones.",
     "Should we try the brand-new message broker everyone is talking about?"),
    ("plans-first", "Plans before large edits",
     "Writes a short plan and waits for agreement before a change that touches many modules.",
     "I've been asked for a big refactor; should I start editing files straight away?"),
    ("hates-notifications", "Mutes chat while programming",
     "Turns off Slack and email alerts during focused coding time.",
     "Is it fine to ping them with messages while they are deep in code?"),
    ("money-as-integers", "Stores money as integer cents",
     "Represents amounts of currency as whole numbers of the smallest unit, never as floats.",
     "What type should I use for a price in the new invoice model?"),
    ("reads-library-source", "Reads the source of dependencies",
     "When documentation is unclear, opens the library's code to see what it does.",
     "The docs of this package don't explain the option; how would they find out?"),
    ("timeouts-everywhere", "Puts a timeout on every network call",
     "Every outgoing HTTP or RPC request has a deadline; a call without one is a bug.",
     "I'm calling a third-party API; what about requests that hang forever?"),
    ("dead-code-removal", "Deletes commented-out code",
     "Removes old code left in comments; git history keeps it.",
     "There's a block of disabled lines at the bottom of the file; keep it just in case?"),
    ("asks-for-options", "Wants options with trade-offs",
     "Prefers two or three alternatives with their costs to a single recommendation.",
     "They asked which queue to pick; should I give one answer?"),
]

SUBJECT_TAGS = {"pet": "personal", "commute": "personal", "coffee": "personal", "holiday": "personal",
                "food": "personal", "timezone": "personal"}


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in s.lower()).strip("-")


def _title(statement: str) -> str:
    words = statement.rstrip(".").split()
    return " ".join(words[:8])


def beliefs():
    """Every belief of the set: (id, title, statement, scope, tags)."""
    out = []
    for topic, (facts, _, _) in PERSON_TOPICS.items():
        for name, text in facts.items():
            out.append((f"{_slug(name)}-{topic}", _title(text), text, "global",
                        (SUBJECT_TAGS.get(topic, "team"),)))
    for topic, (facts, _, _) in PROJECT_TOPICS.items():
        for proj, text in facts.items():
            out.append((f"{proj}-{topic}", _title(text), text, proj, (topic.split("-")[0],)))
    for bid, title, text, _ in PARAPHRASE:
        out.append((bid, title, text, "global", ()))
    return out


def queries() -> list[dict]:
    """Every query: {"query", "relevant": set of ids, "type"}."""
    out = []
    for topic, (_, direct, para) in PERSON_TOPICS.items():
        for name in PEOPLE:
            rel = {f"{_slug(name)}-{topic}"}
            out.append({"query": direct.format(name=name), "relevant": rel, "type": "person"})
            out.append({"query": para.format(name=name), "relevant": rel, "type": "person-para"})
    for topic, (_, direct, para) in PROJECT_TOPICS.items():
        for proj in PROJECTS:
            rel = {f"{proj}-{topic}"}
            out.append({"query": direct.format(proj=PROJECT_SAID[proj]), "relevant": rel, "type": "project"})
            out.append({"query": para.format(proj=PROJECT_SAID[proj]), "relevant": rel, "type": "project-para"})
    for bid, _, _, q in PARAPHRASE:
        out.append({"query": q, "relevant": {bid}, "type": "paraphrase"})
    return out


def make_vault(root, *, filler: int = 200, seed: int = 0) -> Path:
    """The subjects vault: synth's `filler` beliefs (no observations) plus this set's beliefs."""
    import synth

    from epimem.core.model import Belief, Evidence
    from epimem.core.notes import render_belief

    root = Path(root)
    synth.make_vault(root, n_beliefs=filler, n_observations=filler, seed=seed, commit=False,
                     labels_path=root.parent / f"{root.name}.labels.json")
    for bid, title, text, scope, tags in beliefs():
        b = Belief(id=bid, title=title, kind="fact", basis="self-report", confidence=0.8,
                   permanence="durable", first=FIRST, tags=tuple(tags), scope=scope, statement=text,
                   evidence=(Evidence(FIRST, "added", "", "added by the user (0.80)"),))
        (root / "beliefs" / f"{bid}.md").write_text(render_belief(b), encoding="utf-8")
    return root


if __name__ == "__main__":
    qs = queries()
    print(f"{len(beliefs())} beliefs, {len(qs)} queries")
