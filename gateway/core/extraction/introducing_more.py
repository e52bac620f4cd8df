"""Identity from an introduction as rules/2026-12-06.2 reads it: what 2026-12-06.1 reads
(`introducing`) of the speaker's own words made plain (`own_words`), less what no introduction
says, and more cues.

What no introduction says (`_refused`): a role with a possessive in it ("saw your booth"), nor
one that is neither a job title by its head nor tied to an organization ("new starter"; "pastor
at St. Aidan's Church" is tied); a department for an employer ("(Legal)"); a job title for a
name or an employer ("CISO at Tamarind Health here", "it's Dmitri (SRE)": the title is the
role); a greeting, a day or an initial for a name. The modifiers a title is said with ("the only
developer", "the new sys admin") and where it is held ("intern in Finance") are no part of it.

The cues added, each tying a constituent to the speaker by its grammar:

- a sentence that is a signature (`signatures.alone`), a signature in parentheses ("Marcus Bell
  here (IT admin, Copperline Schools)"), and a name "from" an organization as a message's
  opening sentence ("Hello! Zainab Hussain from Lumora Events.", "Carlos from the procurement
  team at Vantix Aerospace.");
- a name "here, from the TEAM at ORG", "it's NAME again", "I'm NAME by the way", the name on the
  account or the booking;
- a role "as" a title after a verb of working or writing ("I've joined Tessaract Bio as VP of
  Engineering", "working part-time as a cashier at Tesco", "Writing as the treasurer of the
  Oakridge PTA"), or opening the sentence ("As the founder of ..., how should I"); a title by
  its head, an occupation's suffix too ("I'm a biostatistician", "I'm currently a junior data
  analyst"), said without its article as people writing in a second language say it ("I am
  nurse at ...");
- an employer said as a described organization and its name, tied to the speaker ("at a fintech
  called Larkspur Pay", "I own a small bakery (Crumb & Co)", "my business, CreativeSpark
  Marketing,"), "writing from ORG" without its subject, "I do the books for ORG", "my boss at
  ORG", "I've been with ORG for three years";
- a plan by the words plans are named with (`_TIERS`, a closed class of the trade: Free, Pro,
  Business, Enterprise, ...), said without "plan": "we're on Starter", "we pay for
  Enterprise", "our Business account", "upgrade from Team to Enterprise", "Enterprise customer.";
  a plan's other nouns ("the Clinic Pro bundle", "the Business Fibre 500 package"), its name with
  a number ("Connect 30GB"), in parentheses ("(Agency plan, if it matters)"); held by no one
  else ("my wife's on the Gold plan");
- of a question, the clauses after it that state something of the speaker ("how do i cancel,
  im on Premium Individual and ...").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gateway.core.extraction import introducing, signatures
from gateway.core.extraction.holders import another_holder
from gateway.core.extraction.introducing import NAME, ORG, ROLE_WORD, UPPER, speaker
from gateway.core.extraction.own_words import OPENING_GREETING, THANKS, plain
from gateway.core.extraction.signatures import (
    NOT_A_NAME,
    POSSESSIVE,
    TITLE_HEAD,
    department,
    titled,
)

__all__ = ["introduced", "signed"]

# Of a question, a clause after it that states something of the speaker ("how do i cancel, im
# on Premium Individual and ...").
_STATES = re.compile(
    r"(?:[,;]|\s[-—–])\s+((?:i'm|im|i am|we're|we are|i work|we r|i've been)\b[^,;?]*)(?=[,;]|$)",
    re.IGNORECASE,
)
# Dashes between a list's items: "Ideas: - Paris - Rome" is no dash before a signature.
_LIST_DASH = re.compile(r"\s[-–—~*•]\s")


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_HI = r"(?:hi, )?"
_ROLE_TITLE = (
    rf"(?P<role>(?:{ROLE_WORD} ){{0,3}}(?:{TITLE_HEAD.pattern})"
    rf"(?: (?:of|to) (?:the )?(?-i:[{UPPER}][\w&]+(?: [{UPPER}][\w&]+)?))?)"
)
_NAMES = (
    _cue(rf"^{_HI}{NAME} here,? from (?:the )?[a-z][a-z &-]{{0,40}}? (?:at|of|for) {ORG}"),
    _cue(rf"^{_HI}{NAME} here,? from\b"),
    _cue(rf"(?:^{_HI}|, )(?:it's|its|this is) {NAME} again\b"),
    # "Marcus Bell here (IT admin, Copperline Schools)": a signature in parentheses.
    _cue(rf"^{_HI}{NAME} here,? \((?P<signed>[^()]{{2,80}})\)"),
    # "Quick one from Ana at Bluefin Payroll:", opening a message.
    _cue(rf"^{_HI}(?:a )?(?:quick )?(?:one|question|note|message) from {NAME} (?:at|from) {ORG}"),
    _cue(
        rf"(?:^{_HI}account holder:|\bname on (?:the|my|our) (?:account|booking|reservation|"
        rf"ticket|card|order|policy|lease) is|\baccount owner is me,)\s*{NAME}"
    ),
    _cue(rf"\b(?:i'm|i am|my name is|my name's) {NAME},? (?:by the way|btw)\b"),
    # "I'm Oskar (new intern in Finance)": a signature in parentheses after the name.
    _cue(rf"\b(?:i'm|i am|this is|my name is) {NAME} \((?P<signed>[^()]{{2,80}})\)"),
)
# A name from an organization (past its team), the whole of a message's opening sentence.
_OPENING = _cue(
    rf"^{_HI}{NAME},? (?:from|with) (?:the )?(?:[a-z][a-z &-]{{0,40}}? (?:at|of) )?{ORG}\W*$"
)
# What ends a title said alone: a stop, or a word that goes on about where or when.
_TITLE_END = r"(?=[,.;:!?)(]|$|\s(?:and|in|on|at|for|with|who|here|by|from|since|\w+ing)\b)"
# The verbs a speaker is something "as" by: "I've joined Tessaract Bio as VP of Engineering",
# "working part-time as a cashier at Tesco", "Writing as the treasurer of the Oakridge PTA".
_AS_VERBS = (
    r"(?:joined|join|started|start|starting|work|works|working|serve|serving|handle|handling|"
    r"hired|came on|signed on|volunteer|volunteering|employed|writing|contacting you|reaching "
    r"out|emailing|messaging|acting|speaking)"
)
_AS = (
    # A title then its organization: "as the treasurer of the Oakridge Parent-Teacher
    # Association", "as a cashier at Tesco" (not "VP of Engineering": "of" an organization
    # only with "the").
    _cue(
        rf"(?:\bi\b[^.;?!]{{0,60}}?\b|^{_HI}){_AS_VERBS}\b[^.;?!]{{0,40}}? as (?:an? |the |our )?"
        rf"(?:new )?(?P<role>(?:{ROLE_WORD} ){{0,3}}(?:{TITLE_HEAD.pattern})) (?:(?:at|for|with) "
        rf"(?:the )?|of the ){ORG}"
    ),
    _cue(
        rf"(?:\bi\b[^.;?!]{{0,60}}?\b|^{_HI}){_AS_VERBS}\b[^.;?!]{{0,40}}? as (?:an? |the |our )?"
        rf"(?:new )?{_ROLE_TITLE}\b"
    ),
    # Opening the sentence the speaker goes on in: "As the founder of ..., how should I".
    _cue(
        rf"^{_HI}as (?:the |an? |our )?{_ROLE_TITLE}(?: (?:at|for|with|of) {ORG})?\b"
        r"(?=.*\b(?:i|i'm|i'd|i've|i'll|we|we're|my|our)\b)"
    ),
    # A title alone by its head: "I'm a biostatistician", "I'm the billing contact".
    _cue(
        r"\b(?:i'm|i am|im) (?:currently |now |also |actually |just )?(?:a|an|the) "
        rf"(?:only |sole |new )?(?P<role>(?:{ROLE_WORD} ){{0,3}}(?:{TITLE_HEAD.pattern})){_TITLE_END}"
    ),
    # A title in parentheses after the speaker's organization: "I lead partnerships at
    # Tessellate (Head of Partnerships)".
    _cue(
        rf"\bi (?:lead|run|manage|handle|work|do)\b[^.;?!]{{0,40}}? (?:at|for) {ORG} "
        r"\((?P<role>[^()]{2,40})\)"
    ),
    # Without its article, as people writing in a second language say it: "I am nurse at
    # Saint Mary clinic", "i am student and have ...".
    _cue(rf"\b(?:i'm|i am|im) (?P<role>(?:{ROLE_WORD} ){{0,2}}(?-i:[a-z]+)) (?:at|in|for|and)\b"),
    # A name in apposition to a title: "I'm Aroha, HR advisor by day", "My name is Ingrid
    # Sølvberg, Head of Procurement at Nordvik Maritime AS".
    _cue(
        rf"\b(?:i'm|i am|this is|my name is|it's) {NAME}(?: here)?, (?:an? |the )?{_ROLE_TITLE}"
        rf"(?: (?:at|for|with) {ORG.replace('<org>', '<org_at>')})?{_TITLE_END}"
    ),
)
# What an organization is called when it is described: "a fintech", "a boutique law firm".
_ORGANIZATIONS = (
    r"(?:company|business|startup|start-up|firm|agency|studio|shop|store|nonprofit|non-profit|"
    r"charity|association|practice|clinic|consultancy|brand|bakery|restaurant|cafe|café|brewery|"
    r"fintech|lab|school|academy|college|university|hospital|foundation|trust|co-op|cooperative|"
    r"organization|organisation|org|society|council|network|outfit|salon|gym|label|publisher|"
    r"hotel|farm|winery|garage|workshop|factory|manufacturer|distributor|retailer)"
)
# A described organization and its name, tied to the speaker by a verb of working or owning
# ("I'm a product manager at a fintech called Larkspur Pay", "I own a small bakery (Crumb &
# Co)", "I'm the office manager for a small firm, Osei & Partners,", "we're a tiny charity
# (Wildflower Trust)"), or by a possessive ("my business, CreativeSpark Marketing,").
_TIED = (
    r"(?:\bi(?:'m| am)? (?:also |currently |now )?(?:work(?:ing)? (?:at|for|with)|own|run|"
    r"founded|co-founded|started|manage|lead)|\b(?:i'm|i am|im|as) (?:a|an|the) (?:[\w-]+ ){0,3}?"
    rf"(?:{TITLE_HEAD.pattern}) (?:at|for|with|of)|\b(?:we're|we are)) (?:a|an|our|my|the)"
)
_DESCRIBED = _cue(
    rf"(?:{_TIED} (?P<described>(?:[\w'’-]+ ){{0,4}}?{_ORGANIZATIONS})|\b(?:my|our) (?:own )?"
    rf"(?P<owned>(?:[\w'’-]+ ){{0,3}}?{_ORGANIZATIONS}))(?: (?:called|named) {ORG}|"
    rf" \({ORG.replace('<org>', '<org_in>')}\)|, {ORG.replace('<org>', '<org_comma>')},)"
)
_ANOTHER = re.compile(
    r"\b(?:his|her|their|he|she|they|friend|someone|who|fictional|character)\b", re.IGNORECASE
)
_EMPLOYERS = (
    _cue(
        rf"^{_HI}(?:writing|reaching out|emailing|messaging|calling) (?:to you )?from (?:the )?"
        rf"(?:[a-z][a-z &-]{{0,30}}? (?:at|of) )?{ORG}"
    ),
    _cue(
        r"\bi (?:handle|do|oversee|look after|support|coordinate|manage|lead|run) (?:the |our )?"
        rf"[a-z][\w -]{{0,30}}? (?:for|at) {ORG}"
    ),
    _cue(
        rf"\b(?:our )?(?:company|company's|business|organization|organisation)(?: name)? is {ORG}"
    ),
    _cue(rf"^{_HI}(?:we're|we are) {ORG},"),
    _cue(rf"\b(?:we|i) use (?:your|the) [a-z][\w -]{{0,25}}? at {ORG}"),
    # Who the speaker works with, at the speaker's work: "my boss at Deloitte".
    _cue(
        r"(?<!, )\bmy (?:boss|manager|supervisor|team|team lead|colleagues?|co-?workers?|department|"
        rf"employer) (?:at|from) {ORG}"
    ),
    _cue(rf"\bi(?:'ve| have) (?:been|worked) (?:at|with|for) {ORG} (?:for|since)\b"),
    _cue(rf"\bat work \({ORG}\)"),
    _cue(rf"\bon behalf of (?:the )?{ORG},? where (?:i|we)\b"),
)
# The words plans are named with: a closed class of the trade, not of any case.
_TIERS = frozenset(
    {
        *("free", "basic", "starter", "plus", "pro", "premium", "business", "enterprise"),
        *("team", "teams", "growth", "standard", "essential", "essentials", "professional"),
        *("ultimate", "gold", "silver", "platinum", "bronze", "family", "student", "personal"),
        *("individual", "scale", "unlimited", "premier", "advanced", "lite", "elite", "startup"),
        *("education", "nonprofit", "corporate", "deluxe", "core", "launch"),
    }
)
_PLAN = rf"(?P<plan>(?-i:[{UPPER}][\w+-]*(?: (?:[{UPPER}][\w+-]*|\d[\w+-]*)){{0,2}}))"
_PLAN_KINDS = r"(?:package|bundle|membership|plan|tier|subscription|license|licence)"
# Said by a plan's name alone, so read only when a word of it is one plans are named with.
_TIER_PLANS = (
    _cue(
        r"\b(?:we're|we are|were|i'm|i am|im|(?:our|my) (?:account|workspace|subscription|"
        rf"company|team) is)(?: currently| still)? on (?:the )?{_PLAN}\b"
    ),
    _cue(
        rf"\b(?:we|i)(?: pay|'re paying| are paying|'m paying| am paying| subscribe) (?:for|to) "
        rf"(?:the )?{_PLAN}"
    ),
    _cue(
        rf"\b(?:we|i) (?:have|use|are using|'re using|'ve got) (?:the )?{_PLAN}"
        r"(?=\W*$|[,.;!?)]| (?:and|but|so|plan|tier|subscription|now|too)\b)"
    ),
    # A plan's other nouns name a gym or a shop as often ("my Ironleaf membership").
    _cue(
        rf"\b(?:on|our|my|it's the|its the|it is the) (?:the )?{_PLAN} (?:account|workspace|"
        r"package|bundle|membership)\b"
    ),
    _cue(rf"\b(?:upgrad|mov|switch|migrat|go)\w* from (?:the )?{_PLAN} to\b"),
    # "we upgraded to Business", "just upgraded to Premium yesterday" (not "my account would
    # be upgraded to Business").
    _cue(
        rf"(?:\b(?:we|i)(?:'ve| have)? |(?:^{_HI}|[,;.!] )(?=just |recently ))(?:just |recently )?"
        rf"(?:upgraded|downgraded|switched|moved|changed)(?: us| our account| my account)? to "
        rf"(?:the )?{_PLAN}\b"
    ),
    _cue(
        rf"\b(?:we|i)(?:'ve| have)? (?:had|have|got) (?:a |an |the )?{_PLAN} (?:account|"
        rf"{_PLAN_KINDS})\b"
    ),
    _cue(rf"^{_HI}{_PLAN} (?:customer|member|subscriber|user)\W*$"),
)
_NAMED_PLANS = (
    _cue(rf"\b(?:on|our|my) (?:the )?{_PLAN} (?:plan|tier|subscription|license|licence)\b"),
    _cue(rf"\b(?:subscription|plan|tier|package) is (?:the |on )?{_PLAN}(?: (?:plan|tier))?\b"),
    # "our account (Scale plan, billed annually)", "(Agency plan, if it matters)", "the
    # Enterprise Plus account we hold".
    _cue(rf"\((?:on )?(?:the )?{_PLAN} {_PLAN_KINDS}\b"),
    _cue(
        rf"\bthe {_PLAN} (?:{_PLAN_KINDS}|account) (?:we|i) (?:hold|have|are on|'re on|'m on|am on)"
    ),
)
_WHERE = re.compile(r" (?:in|on) (?:the )?\S+(?: \S+)?$")  # "intern in Finance": where, not what
_TRAILING_VERB = re.compile(r"(?<=\w) [a-z]+ing$")
# Someone else the subject of a plan's clause: "my wife's on the Gold plan".
_OTHERS = re.compile(
    r"\b(?:my|our|his|her|their) \w+(?:'s|’s| is| are)\b|\b(?:he|she|they)(?:'s|’s| is| are|'re)\b",
    re.IGNORECASE,
)
_MODIFIERS = re.compile(r"^(?:only|sole|new|current) ", re.IGNORECASE)

Claims = Iterator[tuple[str, str | None]]


# A day or a month is a time, not a name ("It's Monday again").
_WHEN = frozenset(
    {
        *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
        *("january", "february", "march", "april", "may", "june", "july", "august"),
        *("september", "october", "november", "december", "today", "tomorrow", "tonight"),
    }
)
# An initial alone ("P." of "Regards, P. Ashdown" split at its stop) is no name.
_INITIAL = re.compile(rf"[{UPPER}]\.?")


def _refused(found: dict[str, str], sentence: str = "") -> dict[str, str]:
    """`found` less what no introduction says; a title read as a name or an employer is the
    role ("CISO at Tamarind Health here", "it's Dmitri (SRE)")."""
    kept = dict(found)
    for key in ("user.name", "user.employer"):
        value = kept.get(key, "")
        if value and TITLE_HEAD.fullmatch(value):
            del kept[key]
            kept.setdefault("user.role", value)
    name = kept.get("user.name", "")
    first = name.split()[0].casefold() if name else ""
    if name and (first in NOT_A_NAME or first in _WHEN or _INITIAL.fullmatch(name)):
        del kept["user.name"]
    role = kept.get("user.role")
    if role is not None:
        # A role is a job title: said by its head or tied to an organization ("pastor at St.
        # Aidan's Church"), without a possessive ("saw your booth"), a verb going on after it
        # ("a locum GP covering at") no part of it.
        role = _WHERE.sub("", _TRAILING_VERB.sub("", _MODIFIERS.sub("", role)))
        tied = re.search(rf"{re.escape(role)},? (?:at|for|with|of) (?:the )?[{UPPER}]", sentence)
        if POSSESSIVE.search(role) or not (titled(role) or tied) or role.casefold() == "head":
            del kept["user.role"]
        else:
            kept["user.role"] = role
    employer = kept.get("user.employer", "x")
    if department(employer) or re.match(r"(?:Mr|Mrs|Ms|Mx|Dr|Prof)\b", employer):
        del kept["user.employer"]
    return kept


def _named(raw: str) -> bool:
    """Whether `raw` is a name the speaker may go by (`introducing.speaker`), no greeting."""
    return speaker(raw) is not None and raw.split(maxsplit=1)[0].casefold() not in NOT_A_NAME


def _opens(before: str) -> bool:
    """Whether a sentence after `before` opens its message: nothing or a greeting before it."""
    return not OPENING_GREETING.sub("", f"{before} ").strip()


def _org(match: re.Match[str]) -> str | None:
    named = [v for k, v in match.groupdict().items() if k.startswith("org") and v]
    return named[0].rstrip(".,") if named else None


def _names(sentence: str, before: str, asking: bool) -> Claims:
    if not asking:
        yield from signatures.alone(sentence.removeprefix("Hi, ")).items()
        opening = _OPENING.match(sentence) if _opens(before) else None
        if opening and _named(opening.group("name")):
            yield "user.name", opening.group("name")
            yield "user.employer", _org(opening)
    for match in (m for cue in _NAMES for m in cue.finditer(sentence)):
        if _named(match.group("name")):
            yield "user.name", match.group("name")
            yield "user.employer", _org(match)
            if match.groupdict().get("signed"):
                parts = [match.group("name"), *signatures.parts_of(match.group("signed"))]
                yield from signatures.read(parts, signed_off=True).items()


def _roles(sentence: str) -> Claims:
    for match in (m for cue in _AS for m in cue.finditer(sentence)):
        name = match.groupdict().get("name")
        if name is not None and not _named(name):
            continue
        if titled(match.group("role")):
            yield "user.role", match.group("role")
        yield "user.name", name
        yield "user.employer", _org(match)


def _employers(sentence: str) -> Claims:
    for match in _DESCRIBED.finditer(sentence):
        if not _ANOTHER.search(sentence[: match.start()]):
            yield "user.employer", _org(match)
    for match in (m for cue in _EMPLOYERS for m in cue.finditer(sentence)):
        yield "user.employer", _org(match)


def _plans(sentence: str) -> Claims:
    tiered = ((m, True) for cue in _TIER_PLANS for m in cue.finditer(sentence))
    named = ((m, False) for cue in _NAMED_PLANS for m in cue.finditer(sentence))
    for match, by_tier in (*tiered, *named):
        plan = match.group("plan")
        if by_tier and not any(w.casefold() in _TIERS for w in plan.split()):
            continue
        clause = sentence[: match.start()].rsplit(",", 1)[-1]
        held = another_holder(sentence, plan, "user") in (None, "your", "you")
        if held and not _OTHERS.search(clause):
            yield "account.plan", plan


def introduced(sentence: str, before: str = "", asking: bool = False) -> dict[str, str]:
    """The identity claims `sentence` (after `before`, in its turn) introduces its speaker by:
    2026-12-06.1's of it made plain, less what no introduction says, then the cues above for
    the keys it gives none of."""
    sentence, before = plain(sentence), plain(before)
    found = _refused(introducing.introduced(sentence, before, asking), sentence)
    stated = introducing.asked(sentence) if asking else sentence
    # Of a question, the clauses after it that state something of the speaker too: "how do i
    # cancel my subscription, im on Premium Individual and the button is greyed out".
    said = [stated, *(_STATES.findall(sentence) if asking else [])]
    for part in said:
        more = (*_names(part, before, asking), *_roles(part), *_employers(part), *_plans(part))
        for key, value in more:
            if value and key not in found:
                found[key] = value
    return _refused(found, sentence)


def signed(closing: str, several: bool = True) -> dict[str, str]:
    """2026-12-06.1's reading of a message's closing line (`introducing.signed`), a thanks
    however spelled ("thx, Ramón")."""
    if len(_LIST_DASH.findall(f" {closing}")) > 1:
        return {}  # a list's items, not a dash before a signature: "Ideas: - Paris - Rome"
    return _refused(introducing.signed(THANKS.sub("Thanks", closing.strip()), several))
