"""Identity from a self-introduction as rules/2026-12-06.1 reads it: by the cues that tie a
name, an organization, a role or a plan to the speaker, over constituents read by their shape.

The constituents:

- a name: capitalized words, letters of any script's Latin alphabet ("Tomás", "González"),
  joined by a hyphen or an apostrophe ("O'Donnell-Reyes", "Jia-Hui"), initials before them
  ("J. R. Castellanos"); never a word `introductions.speaker_name` refuses, nor "I";
- an organization: capitalized words joined by "&", "of", "and", "de", "the" (never before
  "I": "Quintana Beverage Distributors and I need"), then its legal suffixes ("Co., Ltd.");
- a role: up to four words of any case ("product manager", "Chief Medical Officer", "PhD
  student", "IT admin"), before "at", "for", "with" or "of" an organization (a role with "of"
  in it, "Head of People", only before the other three); never one opening with a possessive
  ("my manager" is a relation, and the name before it someone else's);
- a plan: one or two capitalized words before "plan", "tier", "subscription", or before
  "customer", "member", "subscriber", "account" ("Enterprise customer here", "a Gold member").

The cues, each the speaker's own by its grammar:

- naming: "I'm", "my name is", "this is", "it's" before a name, or a name then "here" at the
  sentence's opening ("Tomasz from payroll here"), or a sentence that is only a name after a
  sign-off ("Regards,"), or only a signature ("Kenji Watanabe, product manager at Soylent
  Labs."); an organization may follow a name by "from", "at", "with" (past a department: "from
  accounts payable at Kinross Mining") or in parentheses;
- a message's closing line (`signed`): a sign-off, an honorific or a dash, then a name, a title
  by its head and an organization ("Thanks, Winston Achebe AP Manager");
- a role: "I'm a/an/the ROLE at ORG", "as the ROLE of ORG", a name in apposition to "ROLE at
  ORG" after a naming cue, "where I'm a ROLE", "I work as a ROLE", "ROLE here" opening a
  message, "I'm the CFO" (a title alone: capitalized or an acronym), and a role said alone only
  by the head of a job title (`HEADS`, a closed class of English: "I'm a pediatric nurse", not
  "I'm a big believer in");
- an employer: "I work at/for ORG", "I run/lead ops at ORG", "I run ORG", "I run a shop called
  ORG", "I'm writing from ORG", "our company, ORG,", and a new one told as a start ("I start at
  ORG", "I just joined ORG"), which is the same claim as the older;
- a plan: on, to, with, using, bought the PLAN plan; our/my PLAN plan; the PLAN plan I'm on; a
  PLAN customer/member/account; held by no one else ("my wife's Family plan"); of a question,
  only one held.

A sentence that asks is read up to where it asks (`asked`).

What stays apart: a place after "from" cannot be told from an organization by its shape ("I'm
Wyatt from Denver" reads Denver as the employer): no gazetteer is carried. Names in lowercase
("this is jen") are not read: lowercase words are too often not names ("this is crazy").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from gateway.core.extraction.holders import another_holder
from gateway.core.extraction.introductions import speaker_name
from gateway.core.extraction.judgement import HEDGE

__all__ = [
    "CLOSING_WORDS",
    "END",
    "GREETING",
    "HEADS",
    "NAME",
    "ORG",
    "PLAN_NAME",
    "ROLE_WORD",
    "UPPER",
    "asked",
    "introduced",
    "signed",
    "speaker",
]

UPPER = "A-ZÀ-ÖØ-Þ"
_CAP = rf"[{UPPER}][^\W\d_]*(?:['’-][^\W\d_]+)*"
_NOT_I = r"(?!I\b|I['’])"
NAME = rf"(?P<name>(?-i:(?:[{UPPER}]\. ?){{0,3}}{_NOT_I}{_CAP}(?: (?:[{UPPER}]\.|{_NOT_I}{_CAP})){{0,3}}))"
_TOKEN = rf"{_NOT_I}[{UPPER}][\w&'’.-]*"
_SUFFIX = r"(?:,? (?:Inc|LLC|LLP|Ltd|GmbH|Corp|Co|PLC|AG|SA|Pty|BV|NV)\.?)*"
ORG = rf"(?P<org>(?-i:{_TOKEN}(?: (?:&|of|and|de|the) {_TOKEN}| {_TOKEN})*{_SUFFIX}))"
# A role's words: no preposition, article, pronoun or auxiliary ("Plus, I've been experimenting
# with Italian recipes" names no role).
ROLE_WORD = (
    r"(?!(?i:at|for|with|of|from|in|on|and|to|here|where|who|when|the|a|an|we|you|"
    r"(?:i|we|you|they|he|she|it|that|there)['’]\w+|"
    r"he|she|they|is|are|was|were|be|been|being|has|have|had)\b)"
    r"(?!(?-i:i|it)\b)"  # in lowercase only: "IT admin" is a role
    r"[^\W\d_][\w'’-]*"
)
_ROLE = rf"(?P<role>{ROLE_WORD}(?: {ROLE_WORD}){{0,3}})"
_ROLE_OF = rf"(?P<role>{ROLE_WORD}(?: {ROLE_WORD}){{0,2}}(?: of {ROLE_WORD})?)"
_AT = r"(?:at|for|with)"
_ARTICLE = r"(?:the |a |an )"
GREETING = r"(?:(?:hi|hello|hey|yo|dear \w+|good (?:morning|afternoon|evening))[,!]? )"
END = r"(?=[,.!;:)?]|$|\s(?:and|here|btw|from|at|with|of)\b|\s[-—–])"
_DETERMINER = r"(?:the|an?|our|my|your|their|this|that|his|her|its|which|what|any|every)\b"
PLAN_NAME = rf"(?!{_DETERMINER}){_NOT_I}(?P<plan>(?-i:[{UPPER}][\w+-]*(?: [{UPPER}][\w+-]*)?))"
# A plan said held in a relative clause: "the Basic plan I'm on".
_HELD_ON = re.compile(
    rf"\bthe {PLAN_NAME} (?:plan|tier|subscription) (?:i'm|we're|i am|we are) on\b",
    re.IGNORECASE,
)
# Where a clause that asks opens: after a clause's end, a question word or an auxiliary.
_ASKS = re.compile(
    r"(?:^|[;,:.!]\s+|\bso\s+)(?:what|how|why|when|where|which|who|can|could|would|will|"
    r"should|is|are|am|do|does|did|any|anything|has|have)\b|\?",
    re.IGNORECASE,
)
# The head nouns of job titles, a closed class of English: a role said alone ("I'm a junior
# designer", "I'm the new facilities coordinator") is read only by one, since "I'm a big
# believer in" or "I'm a night owl" say no role; and a signature's title by its head.
HEADS = (
    "manager|director|engineer|developer|dev|designer|analyst|teacher|nurse|practitioner|"
    "doctor|physician|paramedic|surgeon|student|librarian|translator|interpreter|accountant|"
    "bookkeeper|lawyer|attorney|paralegal|consultant|coordinator|administrator|admin|assistant|"
    "officer|lead|head|founder|co-founder|cofounder|owner|clerk|specialist|technician|"
    "scientist|researcher|writer|editor|producer|architect|planner|recruiter|marketer|rep|"
    "representative|supervisor|president|chef|cook|barista|driver|pilot|mechanic|electrician|"
    "plumber|carpenter|therapist|pharmacist|dentist|vet|veterinarian|intern|trainee|contractor|"
    "freelancer|programmer|secretary|receptionist|cashier|auditor|professor|lecturer|tutor|"
    "principal|counselor|counsellor|photographer|journalist|strategist|buyer|controller|"
    "treasurer|partner|associate|executive|agent|worker|instructor|coach|trainer|inspector|"
    "operator|dispatcher|scheduler|nanny|teller|steward|stewardess|attendant|firefighter|"
    "officer|sergeant|ceo|cto|cfo|coo|cio|cmo|vp|sre|pm"
)
_TITLE = rf"(?:{ROLE_WORD} ){{0,3}}(?i:{HEADS})(?:s)?(?: of (?-i:[A-Z]\w+(?: [A-Z]\w+)?))?"
# A day or a month is when one started, not where: "I started Monday".
_WHEN = (
    r"(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|"
    r"april|may|june|july|august|september|october|november|december|today|yesterday)\b"
)
# Verbs that open a sentence before "here" as a name would: "Listen here", "Stop here".
_IMPERATIVES = frozenset(
    {"listen", "stop", "wait", "start", "stay", "sign", "click", "help", "look"}
)
# What a plan's holder is called: "Enterprise customer here" names a plan, not a role.
_CUSTOMERS = frozenset({"customer", "member", "subscriber", "user", "account"})
_POSSESSIVE = re.compile(r"^(?:my|our|your|his|her|their|its)\b", re.IGNORECASE)
# Sign-offs only: "Thanks, Bob" and "Cheers, Bob" as often thank or greet the one addressed.
SIGN_OFF = r"(?:(?:kind |best |warm )?regards|best|sincerely|yours(?: truly)?)"
# A name alone after a sign-off, in one sentence ("Regards, Eleanor Whitcombe") or two.
_SIGNED = re.compile(rf"^{SIGN_OFF},\s+{NAME}\W*$", re.IGNORECASE)
_SIGNING = re.compile(rf"^{SIGN_OFF}\W*$", re.IGNORECASE)
_ALONE = re.compile(rf"^{NAME}\W*$", re.IGNORECASE)


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_NAMING = (
    # "I'm Oren Ben-David, product manager at Skyweave", "this is Haruto Sato from Kiyomizu
    # Trading Co., Ltd.", "it's Patrick O'Donnell-Reyes from accounts payable at Kinross Mining".
    _cue(
        rf"(?:^|[,.!;:] |\b{GREETING})(?:i'm|i am|im|this is|it's|its|my name is|my name's|"
        rf"name's) {NAME}(?:,? (?:from (?:the )?[a-z][a-z &-]{{0,40}}? (?:at|of) |from |at |with )"
        rf"{ORG}| \({ORG.replace('<org>', '<org_in>')}\))?{END}"
    ),
    # "Tomasz from payroll here": a department in lowercase, then "here".
    _cue(rf"^{GREETING}?(?:it's |its )?{NAME} from (?:the )?[a-z][a-z &-]{{0,30}}? here\b"),
    # "Tomás Ferreira here", "Dana Scully from Umbrella Corp here", "Rohan (Kestrel Analytics)
    # here", not "Paris here we come".
    _cue(
        rf"^{GREETING}?(?:it's |its )?{NAME}(?:,? (?:from|at|with|of) {ORG}| "
        rf"\({ORG.replace('<org>', '<org_in>')}\))?,? here(?=\s*(?:[,.!;:)?—–-]|$))"
        rf"(?:,? (?:from|at|with) {ORG.replace('<org>', '<org_after>')})?"
    ),
    # "Nadia Rahimi (Copperline Telecom): what's the rate limit?"
    _cue(rf"^{GREETING}?{NAME} \({ORG}\):"),
    # A greeting, then only a name from an organization, the whole sentence: "Yo, Kenji
    # Watanabe-Hart from Sableridge Games."
    _cue(rf"^{GREETING}{NAME},? (?:from|with) {ORG}\W*$"),
)
# A name in apposition to its role at an organization: after a naming cue ("I'm Oren, product
# manager at Skyweave"), or as the whole sentence, a signature ("Hello! Kenji Watanabe, product
# manager at Soylent Labs.", "Mateo González, founder of Cascara Coffee Co., here."): not a
# sentence going on about them ("Paul Froom, the director of Sentinel, is said to have ...").
_SIGNATURE_END = r"(?:,? here)?\W*$"
_APPOSITION = (
    _cue(rf"\b(?:i'm|i am|this is|it's) {NAME}(?: here)?, {_ARTICLE}?{_ROLE_OF} {_AT} {ORG}"),
    _cue(rf"\b(?:i'm|i am|this is|it's) {NAME}(?: here)?, {_ARTICLE}?{_ROLE} of {ORG}"),
    _cue(rf"^{GREETING}?{NAME}(?: here)?, {_ARTICLE}?{_ROLE_OF} {_AT} {ORG}{_SIGNATURE_END}"),
    _cue(rf"^{GREETING}?{NAME}(?: here)?, {_ARTICLE}?{_ROLE} of {ORG}{_SIGNATURE_END}"),
    # "J. R. Castellanos, Procurement Manager, Halden Steel GmbH."
    _cue(rf"^{NAME}, {_ROLE}, {ORG}\W*$"),
)
_ROLES = (
    _cue(rf"\b(?:i'm|i am|im) {_ARTICLE}{_ROLE_OF} {_AT} {ORG}"),
    # "Of" only after "the": "I'm the principal of Acacia Heights", not "I'm a big fan of IPAs".
    _cue(rf"\b(?:i'm|i am|im) the {_ROLE} of {ORG}"),
    # "As" only of the speaker: "I am writing as the compliance officer of Ashgrove Insurance
    # Co.", not "the old capital, as the old capital of Coruscant".
    _cue(rf"\bi(?:'m| am)? (?:[a-z]+ing |here )?as {_ARTICLE}{_ROLE} (?:of|at|for) {ORG}"),
    _cue(rf"\bi work (?:at|for) {ORG}(?: as {_ARTICLE}?{_ROLE.replace('<role>', '<role_as>')})?"),
)
_ROLES_ALONE = (
    _cue(rf"\bwhere i(?:'m| am) {_ARTICLE}{_ROLE}{END}"),
    _cue(rf"\bi work as {_ARTICLE}?{_ROLE}{END}"),
    # Opening a message, then a stop: "Small business owner here (I run ...)", not "We are here
    # to help" or "The tradeoff here is".
    _cue(
        rf"^{GREETING}?(?!{_DETERMINER})(?P<role>(?-i:(?=[A-Z]?[a-z]){ROLE_WORD}"
        rf"(?: (?=[a-z]){ROLE_WORD}){{1,3}})) here(?=\s*[,.!;:(—–-]|\s*$)"
    ),
    # A role alone by its head: "I'm a high school chemistry teacher", "I'm the new facilities
    # coordinator", "im a nurse practitioner in a rural clinic".
    _cue(
        rf"\b(?:i'm|i am|im) (?:a|an|the) (?:new )?(?P<role>{_TITLE})"
        rf"(?=[,.!;:)(?]|$|\s(?:and|in|on|at|for|with|who|here|working|based|by|from)\b|\s[-—–(])"
    ),
    # A title alone, with "the": "I'm the CFO", not "I'm an Alaska Airlines MVP".
    _cue(
        rf"\bi'm the (?P<role>(?-i:(?:[A-Z][A-Za-z]+|[A-Z]{{2,}})(?: [A-Z][A-Za-z]+){{0,3}})){END}"
    ),
)
_EMPLOYERS = (
    _cue(rf"\bi (?:run|lead|manage) (?:[a-z][\w-]* ){{0,3}}(?:at|for) {ORG}"),
    _cue(rf"\bi (?:run|own|founded|co-founded) {ORG}"),
    # A new employer, told as a start: "I start at Fernhollow Analytics on December 4th", "I
    # just joined Corvane", "I now work for Brightline": the newer supersedes the older.
    _cue(
        rf"\bi(?:'ve| have)? (?:just |recently |finally |officially )?(?:start|started|joined|"
        rf"join)(?: working)? (?:at |with |for )?(?!{_WHEN}){ORG}"
    ),
    _cue(rf"\b(?:i now work|i'm now working|i work now) (?:at|for) {ORG}"),
    _cue(rf"\bmy new (?:job|role|position|employer) (?:is )?(?:at|with|is) {ORG}"),
    # "I run a small bakery called Crumb & Kettle".
    _cue(
        rf"\bi (?:run|own|founded|co-founded|started|work (?:at|for)) (?:a|an|the|my) "
        rf"[a-z][a-z -]{{0,40}}? (?:called|named) {ORG}"
    ),
    # "I'm writing from Lindenhof Hotel Group", not "feedback on my writing from Rachel".
    _cue(
        rf"\bi(?:'m| am) (?:writing|reaching out|emailing|calling|messaging) (?:to you )?from {ORG}"
    ),
    _cue(rf"\bour company,? {ORG},"),
)
_PLAN_KIND = r"(?:plan|tier|subscription|license|licence)\b"
# A plan held ("on the Pro plan", "our Business Premium plan"), then one moved to or bought,
# which a question does not state ("can I switch to the Pro plan?").
_HELD = _cue(rf"\b(?:on|our|my) (?:the |an? |our |my |your )?{PLAN_NAME} {_PLAN_KIND}")
_PLANS = (
    _cue(
        rf"\b(?:to|onto|have|using|with|bought|purchased|upgraded to|downgraded to) "
        rf"(?:the |an? |our |my |your )?{PLAN_NAME} {_PLAN_KIND}"
    ),
    # A plan named alone: "Premium plan."
    _cue(rf"^{PLAN_NAME} (?:plan|tier|subscription)\W*$"),
    # Of the speaker: "I'm a Gold member", "we're a Startup plan account", not "an EU member
    # state" or "To account for".
    _cue(
        rf"\b(?:we're|we are|i'm|i am) (?:an? |also an? )?{PLAN_NAME} (?:plan )?"
        rf"(?:customer|member|subscriber|account)\b"
    ),
    _cue(rf"^{GREETING}?{PLAN_NAME} (?:customer|member|subscriber|user) here\b"),
)


def _org(match: re.Match[str]) -> str | None:
    named = [v for k, v in match.groupdict().items() if k.startswith("org") and v]
    return named[0].rstrip(".,") if named else None


def _role(match: re.Match[str]) -> str | None:
    role = match.groupdict().get("role") or match.groupdict().get("role_as")
    return role if role and not _POSSESSIVE.match(role) else None


Claims = Iterator[tuple[str, str | None]]


def _appositions(sentence: str, before: str, asking: bool) -> Claims:
    # A signature is a whole sentence: what a question states before it asks is not one.
    cues = _APPOSITION[:2] if asking else _APPOSITION
    for match in (m for cue in cues for m in cue.finditer(sentence)):
        name, role = speaker(match.group("name")), match.group("role")
        if name is not None and not _POSSESSIVE.match(role):  # not "Alice, my manager at Acme"
            yield from (("user.name", name), ("user.role", role), ("user.employer", _org(match)))


def speaker(raw: str) -> str | None:
    """`raw` as the speaker's name: `speaker_name`'s, and no imperative before "here"
    ("Listen here, I don't have time")."""
    name = speaker_name(raw)
    return None if name is None or name.split()[0].casefold() in _IMPERATIVES else name


def _namings(sentence: str, before: str, asking: bool) -> Claims:
    cues = _NAMING[:-1] if asking else _NAMING  # the last is a whole sentence
    for match in (m for cue in cues for m in cue.finditer(sentence)):
        if (name := speaker(match.group("name"))) is not None:
            yield from (("user.name", name), ("user.employer", _org(match)))
    if asking:
        return
    signed = _SIGNED.match(sentence) or (_SIGNING.match(before) and _ALONE.match(sentence))
    if signed:
        yield "user.name", speaker(signed.group("name"))


def _roles(sentence: str, before: str, asking: bool) -> Claims:
    for match in (m for cue in _ROLES for m in cue.finditer(sentence)):
        yield from (("user.role", _role(match)), ("user.employer", _org(match)))
    for match in (m for cue in (*_ROLES_ALONE, *_EMPLOYERS) for m in cue.finditer(sentence)):
        role = _role(match) if "role" in match.groupdict() else None
        if role is not None and role.rpartition(" ")[2].casefold() not in _CUSTOMERS:
            yield "user.role", role
        yield "user.employer", _org(match)


def _plans(sentence: str, before: str, asking: bool) -> Claims:
    for match in (m for cue in (_HELD, *_PLANS) for m in cue.finditer(sentence)):
        plan = match.group("plan")
        # "Your Standard plan" is the speaker's as the vendor names it; "my wife's" is not.
        if another_holder(sentence, plan, "user") in (None, "your", "you"):
            yield "account.plan", plan


def _held(sentence: str) -> Claims:
    """A plan a question says the speaker holds: "Is the Basic plan I'm on enough?"."""
    for match in _HELD_ON.finditer(sentence):
        yield "account.plan", match.group("plan")


def asked(sentence: str) -> str:
    """What a sentence that asks states before it asks: the part before its first hedge, its
    first clause that asks, or its question mark ("I'm a science teacher at Willow Creek
    Middle School; can you give me a lab?" states its first clause; "If we upgraded to the Pro
    plan, would we get more seats?" nothing)."""
    ends = [m.start() for m in (HEDGE.search(sentence), _ASKS.search(sentence)) if m]
    return sentence[: min(ends, default=len(sentence))]


def introduced(sentence: str, before: str = "", asking: bool = False) -> dict[str, str]:
    """The identity claims `sentence` (after `before`, in its turn) introduces its speaker by,
    each key once: the first cue to give a key gives its value. Of a sentence that asks
    (`asking`), what it states before it asks (`asked`), and a plan it says is held."""
    found: dict[str, str] = {}
    sentence, before = sentence.strip(), before.strip()
    stated = asked(sentence) if asking else sentence
    claims = itertools.chain(
        *(read(stated, before, asking) for read in (_appositions, _namings, _roles, _plans)),
        _held(sentence),
    )
    for key, value in claims:
        if value:
            found.setdefault(key, value)
    return found


# A message's closing line: a sign-off, an honorific or a dash, then a name, perhaps a title and
# an organization ("Thanks, Winston Achebe AP Manager", "Yours faithfully, Geraldine Hoskins
# Parish Clerk Ashcombe Parish Council", "Dr. Nadia Roux Practice Director", "— Ferdinand").
# The sign-offs (`SIGN_OFF`) and, closing a message, the thanks that sign it too.
CLOSING_WORDS = (
    rf"{SIGN_OFF}|warmest regards|best wishes|all the best|yours (?:faithfully|sincerely)|"
    r"(?:many )?thanks(?: again)?|thank you|cheers|warmly"
)
_CLOSING = re.compile(
    rf"^(?:(?:{CLOSING_WORDS})[,!]\s+|[-–—~]+\s*|(?P<honorific>(?:mr|mrs|ms|miss|dr|prof)\.?\s+))"
    r"(?P<signature>.+?)\W*$",
    re.IGNORECASE,
)
# A dash and a name ending the sentence a splitter joined it to: "Please remove me. — Ferdinand".
_DASHED = re.compile(r"\s[-–—~]+\s*(?P<signature>[^-–—~]+?)\W*$")
_SIGNATURE_TOKEN = re.compile(rf"(?-i:[{UPPER}][\w'’.-]*|&|of|and)")
_HEAD = re.compile(rf"(?:{HEADS})s?", re.IGNORECASE)


def signed(closing: str, several: bool = True) -> dict[str, str]:
    """The claims a message's last sentence signs it with: a sign-off or an honorific opening it
    when the message has `several` sentences ("Thanks, Bob" alone thanks Bob), a dash ending it
    in any message; the name, then a title by its head (with the word before it when two words
    of name stay: "Winston Achebe AP Manager"), then an organization."""
    closing = closing.strip()
    match = (_CLOSING.match(closing) if several else None) or _DASHED.search(closing)
    if match is None:
        return {}
    tokens = match.group("signature").split()
    if not tokens or len(tokens) > 9 or not all(_SIGNATURE_TOKEN.fullmatch(t) for t in tokens):
        return {}
    head = next((i for i, t in enumerate(tokens) if i and _HEAD.fullmatch(t)), None)
    start = len(tokens) if head is None else head - 1 if head >= 3 else head
    name = speaker_name(" ".join(tokens[:start])) if 1 <= start <= 4 else None
    if name is None or speaker(name) is None:
        return {}
    found = {"user.name": name}
    if head is not None:
        found["user.role"] = " ".join(tokens[start : head + 1])
        if head + 1 < len(tokens):
            found["user.employer"] = " ".join(tokens[head + 1 :]).rstrip(".,")
    return found
