"""A signature: a name, then the parts that place it (a title, an organization, a department,
contact details), as people sign a message or open one, read by what each part is rather than
by where a pattern expects it (rules/2026-12-06.2).

Where one is read:

- a message's closing lines, below its body: after a sign-off line ("Kind regards,") or a dash,
  or a last line that places a name by a title ("Sunita Pillai, AP Clerk", "Declan Murphy |
  Site Engineer | ext. 4471", "Ben Adeyemi / Executive Assistant to the CFO / Corvane Health"
  on three lines);
- a message's last sentence after a sign-off, its parts by commas ("Thanks, Imogen Blackwood,
  IT lead, Harrowgate Council");
- a sentence, or the message's opening sentences, that are a signature and nothing else
  ("Chidi Okonkwo, Head of Platform, Meridian Freight.", "Emeka Nwosu. Site reliability
  engineer. Vantage Cloud Services."): these need a title or a department beside the name, so a
  list of names or places ("Tom Hardy, Batman, Inception") signs nothing.

Parts are split at commas, bars, slashes, bullets, parentheses, a spaced dash and line ends; "@"
and "at" between a title and an organization split them too. A part that is neither a title
(by its head: `introducing.HEADS`, or an occupation's suffix, "statistician", "radiologist"), a
department ("Payroll team", "Legal"), an organization (capitalized words), nor contact details
ends the reading: a sentence going on about someone ("Paul Froom, the director, is said to")
is no signature, nor a relation ("Alice Chen, my manager at Acme").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gateway.core.extraction.introducing import CLOSING_WORDS, HEADS, NAME, ORG, speaker
from gateway.core.extraction.own_words import elsewhere

__all__ = [
    "NOT_A_NAME",
    "POSSESSIVE",
    "TITLE_HEAD",
    "alone",
    "department",
    "parts_of",
    "read",
    "signature",
    "titled",
]


# The head of a job title: a closed class of English, and the suffixes only occupations take.
# (A chief officer's acronym too: "CISO", "CPO".)
TITLE_HEAD = re.compile(
    rf"(?:{HEADS}|advisor|adviser|aide|contact|volunteer|caregiver|carer|tester|pastor|priest|"
    r"minister|chaplain|rabbi|imam|illustrator|animator|hairdresser|stylist|cleaner|janitor|"
    r"caretaker|housekeeper|gardener|farmer|baker|butcher|waiter|waitress|bartender|courier|"
    r"porter|guard|gp|midwife|artist|actor|actress|dancer|singer|author|novelist|poet|postdoc|"
    r"apprentice|babysitter|landlord|landlady|homemaker|paralegal|notary|surveyor|underwriter|"
    r"broker|realtor|trader|salesperson|salesman|saleswoman|storekeeper|shopkeeper|welder|"
    r"machinist|fitter|labourer|laborer|foreman|forewoman|superintendent|dean|provost|chancellor|"
    r"registrar|bursar|headteacher|headmaster|headmistress|educator|lawmaker|councillor|"
    r"councilor|mayor|clerk|sheriff|deputy|ranger|warden|detective|investigator|candidate|"
    r"fellow|resident)s?|"
    r"[a-z]+(?:ician|ologist|ographer|ometrist|iatrist)s?|(?-i:C[A-Z]{1,3}O)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_][\w'’.-]*")
POSSESSIVE = re.compile(r"\b(?:my|our|your|his|her|their)\b", re.IGNORECASE)
_CLAUSE_WORDS = re.compile(
    r"\b(?i:is|are|was|were|be|been|those|these|some|very|really|you|we|they)\b|\b(?:i|it|so)\b",
)
# A team or a department, which places a person without naming an employer.
_DEPARTMENT = re.compile(
    r"^(?:the )?(?:[\w&-]+ ){0,3}(?:team|department|dept\.?|desk|division)$|^(?:legal|finance|"
    r"payroll|hr|it|marketing|sales|accounts|accounting|procurement|operations|ops|engineering|"
    r"support|billing|facilities|compliance|purchasing|admissions|human resources|customer "
    r"service|accounts payable|accounts receivable|clinical ops|research|product|design|comms|"
    r"communications|pr|people|people ops|talent|recruiting|security|qa|quality|logistics|"
    r"shipping|administration|it support|customer success|partnerships)$",
    re.IGNORECASE,
)
# Contact details: a number to call, an extension, an address online; nothing else.
_CONTACT = re.compile(
    r"^(?:(?:ext|tel|phone|mobile|cell|fax|direct|office|t|m|p)\.?:?\s*)?[+(]?\d[\d\s().+-]{2,}$|"
    r"^\S+@\S+$|^(?:https?://|www\.)\S+$|^pronouns:?\s|"
    r"^(?=[^\d]*\d)\S+(?: \S+){0,2}$",  # where in the office: "4th floor", "Desk 3B-14"
    re.IGNORECASE,
)
# Words that open a greeting, a sign-off or a determiner: never the first of a name.
NOT_A_NAME = frozenset(
    {
        *("greetings", "hello", "hi", "hey", "hiya", "howdy", "yo", "dear", "morning"),
        *("evening", "afternoon", "cheers", "thanks", "thank", "regards", "best", "sincerely"),
        *("our", "my", "your", "their", "his", "her", "the", "this", "that", "a", "an"),
        *("wow", "oh", "ah", "yes", "no", "ok", "okay", "great", "cool", "nice", "awesome"),
        *("sure", "well", "hmm", "haha", "lol", "omg", "yay", "ugh", "please", "sorry"),
    }
)
_SPLIT = re.compile(r"\s*(?:[,|/•·()\n]|\s[-–—]\s)\s*")
_AT = re.compile(r"^(?P<title>.+?)\s+(?:at|@|for)\s+(?P<org>.+)$", re.IGNORECASE)
_NAME_ONLY = re.compile(rf"(?:(?:mr|mrs|ms|mx|miss|dr|prof)\.? )?{NAME}", re.IGNORECASE)
_ORG_ONLY = re.compile(ORG, re.IGNORECASE)
# A sign-off line: alone ("Kind regards,"), before a signature on the same line ("Thanks, Amira
# (Ashbourne Group)"), or a thanks ending in a comma or a bang ("Thanks for looking!").
_SIGN_OFF_LINE = re.compile(
    rf"^(?:{CLOSING_WORDS}|thx|tia)(?:[,!.]*$|[,!]\s+(?P<rest>\S.*)$|\s.*[,!]$)",
    re.IGNORECASE,
)
_DASH = re.compile(r"^[-–—~]+\s*")
_LISTED = re.compile(r"^(?:[-–—~*•]|\d+[.)])\s")
# A sentence's end mark, where a line that is a sentence of the body stops.
_SENTENCE_END = re.compile(r"[.!?:;]$")


def titled(part: str) -> bool:
    """Whether `part` is a job title: a word of it a title's head, no possessive ("my
    manager") and nothing a clause says ("those are some legendary artists")."""
    words = _WORD.findall(part)
    return (
        0 < len(words) <= 7
        and POSSESSIVE.search(part) is None
        and _CLAUSE_WORDS.search(part) is None
        and any(TITLE_HEAD.fullmatch(w.rstrip(".")) for w in words)
    )


def department(part: str) -> bool:
    return _DEPARTMENT.match(part.strip()) is not None


def _organization(part: str) -> bool:
    match = _ORG_ONLY.fullmatch(part)
    return match is not None and len(part.split()) <= 6 and not department(part)


def parts_of(text: str) -> list[str]:
    return [p for p in (p.strip(" .;:") for p in _SPLIT.split(text)) if p]


def read(parts: Sequence[str], signed_off: bool) -> dict[str, str]:
    """The claims of a signature's `parts`, a name first; {} when a part is not one a
    signature has, or (not `signed_off`) nothing beside the name places it."""
    named = _NAME_ONLY.fullmatch(parts[0]) if parts else None
    name = speaker(named.group("name")) if named else None
    if name is None or name.split()[0].casefold() in NOT_A_NAME:
        return {}
    found = {"user.name": name}
    placed = False
    for part in parts[1:]:
        at = _AT.match(part)
        if at and titled(at.group("title")) and _organization(at.group("org")):
            found.setdefault("user.role", at.group("title"))
            found.setdefault("user.employer", at.group("org"))
        elif titled(part):
            found.setdefault("user.role", part)
        elif department(part):
            pass
        elif _organization(part):
            found.setdefault("user.employer", part)
            continue  # an organization alone places no one: "Tom Hardy, Batman, Inception"
        elif _CONTACT.match(part) is None:
            if signed_off and len(part.split()) <= 3 and part.islower():
                continue  # what else a signer says of themselves: "– Yusuf (tenant, 3B)"
            return {}
        else:
            continue  # contact details alone place no one: "Cullavagga, Book 10, Chapter 3."
        placed = True
    return found if signed_off or placed else {}


def _closing_block(lines: Sequence[str]) -> dict[str, str]:
    """The signature below a message's body: its last lines up to a sign-off, a blank line or
    a line that is a sentence."""
    block: list[str] = []
    signed_off = False
    for index, line in enumerate(reversed(lines)):
        sign_off = _SIGN_OFF_LINE.match(line)
        if sign_off:
            signed_off = True
            if sign_off.group("rest"):
                block.insert(0, sign_off.group("rest"))
            break
        if not line or len(_WORD.findall(line)) > 10 or line.endswith("?"):
            break
        if _DASH.match(line):
            if index + 1 < len(lines) and _LISTED.match(lines[-index - 2]):
                break  # the last item of a list, not a signature
            block.insert(0, _DASH.sub("", line))
            signed_off = True
            break
        if block and _SENTENCE_END.search(line):
            break
        block.insert(0, line)
    if not block or len(block) == len(lines):
        return {}  # a signature is below a body
    return read(parts_of("\n".join(block)), signed_off)


# A form's fields, one a line ("Name: Rahul Verma", "Plan: Pro Annual"), read where a message
# has two or more such lines.
_FIELD = re.compile(r"^(?P<field>[A-Za-z][A-Za-z ]{1,20}?)\s*:\s*(?P<value>\S.{0,80})$")
_FIELDS = {
    "name": "user.name",
    "full name": "user.name",
    "your name": "user.name",
    "plan": "account.plan",
    "tier": "account.plan",
    "subscription": "account.plan",
    "package": "account.plan",
    "company": "user.employer",
    "organization": "user.employer",
    "organisation": "user.employer",
    "employer": "user.employer",
    "role": "user.role",
    "title": "user.role",
    "job title": "user.role",
    "position": "user.role",
}


def _fields(lines: Sequence[str]) -> dict[str, str]:
    """A form's claims: two or more of its fields among those above, each value capitalized
    (not a listing's "title: displays" or a config's "image: docker")."""
    claims: dict[str, str] = {}
    for match in (m for m in (_FIELD.match(line) for line in lines) if m):
        key = _FIELDS.get(match.group("field").casefold())
        value = match.group("value").strip().rstrip(".")
        if key is not None and value[:1].isupper():
            claims.setdefault(key, value)
    if len(claims) < 2:
        return {}
    name = claims.get("user.name")
    if name is not None and (speaker(name) is None or not _NAME_ONLY.fullmatch(name)):
        del claims["user.name"]
    return claims


def signature(text: str, sentences: Sequence[str]) -> dict[str, str]:
    """The claims a message (`text`, its `sentences`) is signed with: its closing lines, its
    last sentence after a sign-off, or its opening sentences when they are a signature."""
    for start, end in reversed(elsewhere(text)):  # not a forwarded message's signature
        text = text[:start] + "\n" * text.count("\n", start, end) + text[end:]
    lines = [line.strip() for line in text.strip().splitlines() if not line.startswith(">")]
    found = (_closing_block(lines) or _fields(lines)) if len(lines) > 1 else {}
    if not found and len(sentences) > 1:
        sign_off = _SIGN_OFF_LINE.match(sentences[-1])
        if sign_off and sign_off.group("rest") and "," in sign_off.group("rest"):
            found = read(parts_of(sign_off.group("rest")), signed_off=True)
    opening: list[str] = []
    for sentence in sentences[:4]:
        parts = parts_of(sentence)
        if not parts or not all(_placing(p) for p in parts[0 if opening else 1 :]):
            break
        opening.extend(parts)
    return found or (read(opening, signed_off=False) if opening else {})


def _placing(part: str) -> bool:
    at = _AT.match(part)
    return (
        titled(part)
        or department(part)
        or _organization(part)
        or (at is not None and titled(at.group("title")))
    )


def alone(sentence: str) -> dict[str, str]:
    """The claims of a sentence that is a signature and nothing else ("Chidi Okonkwo, Head of
    Platform, Meridian Freight.")."""
    return read(parts_of(sentence), signed_off=False)
