"""The single-valued attribute patterns, most specific first: the first to match in a clause
gives its fact, and the attribute it names is the fact's claim key."""

from __future__ import annotations

from gateway.core.extraction.patterns import p
from gateway.core.extraction.vocabulary import (
    ADJECTIVES,
    CHANGE_VERBS,
    DAY,
    DETERMINER,
    DIGITS,
    MONEY,
    NAME,
    NOT_AFTER_PREPOSITION,
    NUMBER,
    PHONES,
    RACES,
    ROLES,
    SCHOOL,
    SUBJECT,
    TYPED,
    WEEKDAY,
)

__all__ = ["ATTRIBUTES"]

# Single-valued attributes, most specific first. A `value` group (or, with `tail`, the words
# after the match) is the fact's value; a `previous` group the value it replaced ("from X").
ATTRIBUTES = (
    p("identity", r"\bmy name is (?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*))", "user.name"),
    p(
        "identity",
        # "I'm a contractor for Brightline" / "they hired me full-time": how the user works.
        r"\b(?:i'm|i am|i work as|i'm now|i became) (?:a |an )?(?P<value>(?:full-time |part-time )?"
        r"(?:contractor|freelancer|consultant|intern|employee|temp))\b"
        r"|\bhired me (?:on )?(?:as (?:a |an )?)?(?P<v2>full-time|part-time|permanently|"
        r"permanent|contractor|freelancer)\b",
        "user.employment",
        gate="contractor contractors freelancer consultant intern employee temp hired",
    ),
    p(
        "identity",
        r"\bi (?:work|started working) (?:at|for) (?P<value>(?-i:[A-Z][\w&'-]*(?: [A-Z][\w&'-]*)*))",
        "user.employer",
        gate="work working",
    ),
    p("identity", r"\b(hired me|i joined|i'm joining) [A-Z]?", "user.employer"),
    p(
        "identity",
        r"\b(?:i'm|i am)(?: officially| now)?(?: (?:a|an) [\w -]{2,40}?)? on the "
        r"(?P<value>[\w -]+ team)\b",
        "user.team",
    ),
    p(
        "identity",
        # "I've been in Denver" is where one lives; "I've been to the Grand Canyon", a visit.
        r"\b(?:(?:i live|we live|i moved|we moved|i'm now|now that i'm|now that we're) (?:in|to)"
        r"|(?:i've been|we've been) in) "
        # A place by its name, capitalized: "I'm now in a better mood" names none.
        r"(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*))",
        "user.location",
    ),
    p(
        "identity",
        r"\b(?:on|to|onto) the (?P<value>[\w -]{1,30}?) (?:plan|tier)\b",
        "account.plan",
    ),
    p(
        "identity",
        # "I'm on the Silver PPO", "we're now on Premium": a subscription or coverage held.
        r"\b(?:i'm|i am|we're|we are)(?: now| currently| still)? on (?:the |a )?"
        r"(?P<value>(?-i:[A-Z][\w+-]*(?: [A-Z][\w+-]*){0,2}))(?! team)\b",
        "account.plan",
    ),
    p(
        "identity",
        # "My Pixel keeps dying", "the iPhone camera is great", "got a new Galaxy": the phone
        # the user has, by its brand (a type lexicon: the brand names the attribute).
        # After "the" only with a model number or a part: "the Guide to the Galaxy" is a book.
        r"\b(?:my|(?:got|bought|switched to|upgraded to)(?: an?| the)?)(?: new)? "
        r"(?P<value>" + PHONES + r")\b"
        r"|\bthe (?:new )?(?P<v2>" + PHONES + r")(?= [A-Z]?\d| (?:camera|battery|screen|display|"
        r"charger|case|keyboard|update)s?\b)",
        "user.phone_model",
        gate="iphone pixel galaxy oneplus xperia fairphone motorola nokia xiaomi huawei",
    ),
    p(
        "identity",
        # "got into UC Davis", "move-in weekend at Oregon State", "enrolled at Carleton
        # College": the school someone of the household attends, by its name's shape.
        r"\b(?:got into|accepted (?:at|to|into)|admitted to|enrolled (?:at|in)|attending|"
        r"committed to|transferring to|transferred to|freshman at|sophomore at|"
        r"move-in (?:day|weekend) at|orientation at)(?: the)? (?P<value>" + SCHOOL + r")\b",
        "user.school",
        gate="into accepted admitted enrolled attending committed transferring transferred "
        "freshman sophomore move orientation",
    ),
    p(
        "plan",
        # "I got into the Chicago Marathon", "signed up for the Berlin Half": the race the user
        # is in, keyed by its kind.
        r"\b(?:got into|signed up for|registered for|entered|training for|running)(?: the)? "
        r"(?P<value>(?-i:[A-Z][\w'-]+(?: (?!Half\b)[A-Z][\w'-]+)?)) (?P<attr>(?-i:"
        + RACES
        + r"))\b",
        "user.{attr}",
        intent=True,
        gate="into signed registered entered training running",
    ),
    p(
        "plan",
        # "So I'm running Berlin instead!": a race named without its kind replaces the race
        # known (the newest claim keyed by a race's kind).
        r"\b(?:running|racing) (?:the )?(?P<value>(?-i:[A-Z][\w'-]+(?: [A-Z][\w'-]+)?))"
        r" instead\b",
        "{race}",
        intent=True,
        gate="instead",
    ),
    p(
        "plan",
        # "I'm planning to apply to MBA programs", "First week of my data science bootcamp":
        # the programme the user is applying to or in.
        r"\b(?:apply(?:ing)? to|applied to|enroll(?:ed|ing)? in|start(?:ed|ing)?|doing|"
        r"join(?:ed|ing)?|of|in) (?:an? |the |my )?(?:part-time |full-time |online )?"
        r"(?P<value>(?:[a-z-]+ ){0,2}?(?:bootcamp|apprenticeship)|(?-i:MBA|PhD|MFA|MSc)"
        r"|(?:master's|masters|degree|certificate) program)(?:me)?s?\b",
        "user.program",
        intent=True,
        gate="bootcamp apprenticeship mba phd mfa msc program programs",
    ),
    p(
        "identity",
        # "I play center back for the Riverside Rovers", "First match with Eastside Athletic":
        # the team the user plays for.
        r"\bi play (?:[a-z]+ ){0,3}?for (?:the )?(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3}))"
        r"|\b(?:first|my|our) (?:match|game|season|practice) (?:with|for) (?:the )?"
        r"(?P<v2>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3}))",
        "user.sports_team",
        gate="play match game season practice",
    ),
    p(
        "relation",
        # "my manager, Priya", "my accountant is Roger Hollis", "a new accountant: Anjali Mehta",
        # "our building's property manager is now listed as ...".
        r"\b(?:my|our|your|a|the)(?: [\w']+'s)? (?:new )?(?P<attr>" + "|".join(ROLES) + ")"
        r"(?:,| is| was|:| named| to)?(?: now)?(?: listed as)? (?P<value>" + NAME + ")",
        "user.{attr}",
    ),
    p(
        "relation",
        # "my first 1:1 with Marcus", "I now report to Dana": the user's manager, by the
        # meeting or the line only a manager has with them.
        r"\b(?:1:1|1-on-1|one-on-one)s? with (?P<value>" + NAME + r")"
        r"|\bi(?:'m| am)? (?:now )?report(?:ing)? (?:directly )?to (?P<v2>" + NAME + ")",
        "user.manager",
        gate="with report reporting",
    ),
    p(
        "relation",
        # "Tariq is taking me to a jazz club for our three-month anniversary": whoever shares
        # the user's anniversary is their partner.
        r"^(?!(?:it|this|that|there|today|tomorrow|tonight|next|last|what|we|i)\b)"
        r"(?P<value>(?-i:[A-Z][a-z]+)) (?:is|was|and i|took|takes|surprised|booked|planned)\b"
        r"[^.!?]{0,80}?\b(?:our|my) (?:[\w-]+ )?anniversary"
        r"|\bwith (?P<v2>(?-i:[A-Z][a-z]+))\b[^.!?]{0,60}?\bour (?:[\w-]+ )?anniversary",
        "user.partner",
        gate="anniversary",
    ),
    p(
        "relation",
        # "Jonah and I broke up": the partner claim ends, and the partner's name with it.
        r"\b(?-i:[A-Z][a-z]+) and i (?:just |finally )?(?P<value>broke up|split up|divorced)\b"
        r"|\bi (?:just |finally )?(?P<v2>broke up|split up) with (?-i:[A-Z][a-z]+)\b",
        "user.partner",
        typed=True,
        gate="broke split divorced",
    ),
    p(
        "relation",
        # "the notifications service is owned by Team Atlas", "the catalog now lists the
        # notifications service as owned by Team Nimbus": who owns a thing.
        DETERMINER + SUBJECT + r" (?:is |are |was |as )(?:now )?(?:owned|run|managed|maintained|"
        r"handled|led) by (?P<value>" + NAME + ")",
        "{attr}.owner",
        head=True,
        gate="by",
    ),
    p(
        "relation",
        # "My sister Aoife lives in Melbourne", "Aoife just started her new job in Auckland":
        # where a named person lives or works.
        r"\b(?P<attr>(?-i:[A-Z][a-z]+)) (?:just |now |recently )?(?:lives|moved|relocated|"
        r"(?:started|took|got|landed) (?:a |her |his |their )?(?:new )?job)(?: now)? (?:in|to) "
        r"(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*))",
        "{attr}.location",
    ),
    p(
        "relation",
        # "Daniel and I got engaged", "we got married", "my parents reconciled".
        r"\b(?:(?P<owner>my|our) (?P<attr>[a-z]+)|we|i|[A-Z]\w+ and i)"
        r"(?: (?:have|has) been| are| is| were| got| just got| just| finally)?"
        r" (?P<value>engaged|married|divorced|separated|reconciled|back together|broke up|"
        r"split up)\b",
        "{attr}.relationship",
        typed=True,
        gate="engaged married divorced separated reconciled together broke split",
    ),
    p(
        "state",
        # "My favorite bakery, Lindenhof, is closed for renovations", "at Lindenhof this
        # morning, the first time since they reopened": a named place's state.
        r"\b(?:my|our|the) [a-z][\w -]{1,30}?, (?P<attr>(?-i:[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){0,2})),"
        r" (?:is|was|has been|got)(?: now| officially| temporarily| finally)? "
        r"(?P<value>closed|reopened|open again|shut down)\b"
        r"|\b(?:at|to|from|of) (?P<a2>(?-i:[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){0,2}))\b[^.;!?]{0,60}?"
        r"\bsince (?:they|it) (?P<v2>reopened|closed|shut down)\b",
        "{attr}.state",  # the whole name: "Blue Door" is not a door
        typed=True,
        gate="closed reopened shut",
    ),
    p(
        "state",
        # "Our house on Juniper Lane is officially on the market", "we took the house off the
        # market".
        DETERMINER + SUBJECT + r" (?:is|was|are|got|has been)(?: now| officially| back)?"
        r" (?P<value>on the market|off the market)\b"
        r"|\b(?:took|pulled|put) (?:the |our |my )?(?P<a2>[a-z][\w -]{1,30}?) "
        r"(?P<v2>on the market|off the market)\b",
        "{attr}.state",
        head=True,
        typed=True,
        gate="market",
    ),
    p(
        "state",
        # "auto-renew is turned on" / "My seller account on Craftly got suspended": a state.
        DETERMINER + SUBJECT + r" (?:is|was|got|has been|stays|remains)(?: now| still)?"
        r" (?P<value>turned on|turned off|enabled|disabled|paused|resumed|suspended|reinstated|"
        r"closed|reopened|cancell?ed|active|inactive)\b",
        "{attr}.state",
        head=True,
        typed=True,
        gate="turned enabled disabled paused resumed suspended reinstated closed reopened cancelled canceled active inactive",
    ),
    p(
        "state",
        r"\b(?:i|we|you) (?P<value>turned off|turned on|enabled|disabled|paused|resumed|"
        r"suspended|reinstated|reopened)(?: the| our| my)? (?P<attr>[a-z][\w-]*(?: [\w-]+){0,2}?)"
        r"(?= (?:on|for|in|last|this|yesterday|today|that|which|so|because|to|until)\b|[,.;!]|$)",
        "{attr}.state",
        head=True,
        typed=True,
        gate="turned enabled disabled paused resumed suspended reinstated reopened",
    ),
    p(
        "preference",
        r"\bmy (?:all-time |new |current )?favou?rite (?P<attr>[a-z ]{2,40}?) (?:is|are)\b",
        "user.favorite_{attr}",
        tail=True,
    ),
    p(
        "preference",
        # "Severance has overtaken The Expanse as my favorite show".
        r"\b(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)) (?:has |have )?(?:overtaken|"
        r"replaced|beaten|dethroned|surpassed) (?P<previous>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*))"
        r" as "
        r"(?:my|our) (?:new )?(?:all-time )?favou?rite (?P<attr>[a-z ]{2,40}?)\b(?=[.,!;]|$)",
        "user.favorite_{attr}",
    ),
    p(
        "preference",
        r"(?:\b(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)) |\b)(?:is|as|'s) (?:now )?"
        r"(?:my|your) (?:new )?favou?rite (?P<attr>[a-z ]{2,40}?)\b(?=[.,!;]| now\b|$)",
        "user.favorite_{attr}",
    ),
    p(
        "preference",
        r"\bmy (?:go-to|usual|standard|regular) (?P<attr>[a-z ]{2,30}?) (?:is|are)\b",
        "user.usual_{attr}",
        tail=True,
        head=True,
    ),
    p(
        "preference",
        r"\b(?:is|'s) (?:now )?(?:my|your) (?:new )?(?:go-to|usual|standard|regular) "
        r"(?P<attr>[a-z ]{2,30}?)\b(?=[.,!;]| now\b|$)",
        "user.usual_{attr}",
        head=True,
    ),
    p(
        "preference",
        # "I always want an aisle seat", "book me window seats".
        r"\b(?:i (?:always|usually|only) (?:want|take|choose|pick|get|book)|i prefer|book me|"
        r"reserve me) (?:an? |the )?(?P<value>(?!to\b|it\b|them\b)[a-z-]+ (?P<attr>[a-z]{3,20}?))"
        r"s?\b",
        "user.preferred_{attr}",
    ),
    p(
        "quantity",
        # "750 requests per minute": a rate, keyed by what is counted per what.
        r"\b(?P<value>" + DIGITS + r")(?P<unit> (?P<attr>[a-z]{3,20}) (?:per|an?|/) "
        r"(?P<per>second|minute|hour|day|week|month|year))\b",
        "rate.{attr}_per_{per}",
        gate="#",
    ),
    p(
        "quantity",
        # "I have two cats", "we're at 17 houseplants", "a team of 6 engineers", "runs 12
        # nodes"; spans of time are not things one has.
        r"\b(?:have|own|at|now it's|there are|is|are|of|runs|run|to)(?: now| still)? (?P<value>"
        + NUMBER
        + r" (?P<attr>(?!(?:day|week|month|year|hour|minute|second|time|percent)s?\b|"
        + ADJECTIVES
        + r"\b)(?-i:[a-z]{3,30})))\b",
        "count.{attr}",
        gate="# one two three four five six seven eight nine ten eleven twelve",
    ),
    p(
        "quantity",
        # "listed it on Marketplace for $14,900": an asking price.
        r"\b(?:listed|priced|advertised|selling)\b[^.;]{0,40}? (?:for|at) (?P<value>" + MONEY + ")",
        "user.price",
        typed=True,
        gate="#",
    ),
    p(
        "schedule",
        # "Booked a dental cleaning for March 14", "we deploy the backend every Tuesday".
        r"\b(?:booked|scheduled|set up|made) (?:a |an |my |the |our )?(?P<attr>[a-z][a-z -]{1,30}?)"
        r" (?:for|on) (?P<value>" + DAY + ")",
        "user.{attr}",
        head=True,
        typed=True,
        gate="booked scheduled set made",
    ),
    p(
        "schedule",
        r"\b(?:we|i|they) (?P<attr>[a-z]{3,20}) (?:[\w-]+ ){0,4}?(?:every|on) (?P<value>"
        + WEEKDAY
        + r")\b",
        "user.{attr}",
        head=True,
        gate="monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday sundays",
    ),
    p(
        "schedule",
        r"\b(?:leaving|leave|departing|depart|departs|leaves|flying out)(?: from)?"
        r"(?: (?-i:[A-Z]\w+))?(?: on)? (?P<value>" + DAY + ")",
        "user.departure",
        typed=True,
        gate="leaving leave leaves departing depart departs flying",
    ),
    p(
        "attribute",
        # "catering budget is $9,000", "Sessions are Mondays", "staging is on Postgres 15",
        # "her wedding date: September 20", "the wedding now on October 11".
        DETERMINER + SUBJECT + r"(?: (?:is|are|was|were|came to|comes to|runs|run|stays|"
        r"goes|go)(?: (?:now|still|officially|currently|set|scheduled|booked))*"
        r"| now|:)(?: (?:about|around|roughly|approximately|at|on|for|to|in))? (?P<value>"
        + TYPED
        + r")",
        "{owner}.{attr}",
        head=True,
        typed=True,
        gate="# monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday sundays jan january feb february mar march apr april may jun june jul july aug august sep sept september oct october nov november dec december",
    ),
    p(
        "quantity",
        # "Now that I'm paying $1,975 a month", "we're down to about $31,500 a month now": an
        # amount with a cadence and without its noun updates the known amount it is near.
        r"\b(?:paying|spending|down to|up to|sitting at|we're at|i'm at|it's at|now at)"
        r"(?: (?:about|around|roughly|approximately|only|just))? (?P<value>" + MONEY + r")"
        r"(?= (?:a|per|each|every) (?:month|year|week)\b|/(?:mo|month|yr|year|wk)\b)"
        r"(?![^.;,]{0,14}\b(?:for|on)\b)",
        "{amount}",
        typed=True,
        gate="#",
    ),
    p(
        "attribute",
        # "escalations for the payments service go to Sven Eriksson".
        DETERMINER + SUBJECT + r" (?:now )?go(?:es)? to (?P<value>" + NAME + ")",
        "{owner}.{attr}",
        head=True,
        gate="go goes",
    ),
    p(
        "plan",
        # "we're planning a trip to Japan in October for our anniversary", "we're doing
        # Portugal instead for the anniversary": an intention keyed by what it is for.
        r"\b(?:planning|plan|doing|going|heading|booked|booking|taking)\b[^.;]{0,60}?"
        r"(?:\bto |\bdoing |\bvisit )?(?P<value>(?-i:[A-Z][\w-]+(?: [A-Z][\w-]+)?))"
        r"[^.;]{0,40}? for (?:our|my|the|his|her) (?P<attr>[a-z]+)\b",
        "plan.{attr}",
        intent=True,
        gate="for",
    ),
    p(
        "plan",
        # "migrate application logs ... to a self-hosted Elasticsearch cluster" / "going with
        # ClickHouse for logs instead": what a thing is moving to.
        r"\b(?:migrate|move|moving|migrating|switch|switching)(?: our| the| my)? "
        r"(?P<attr>[a-z][a-z -]{1,30}?) (?:off [^.;]{1,50}? )?to (?:a |an |the )?"
        r"(?:[\w-]+ ){0,2}?(?P<value>(?-i:[A-Z][\w-]+))"
        r"|\bgoing with (?P<v2>(?-i:[A-Z][\w-]+)) for (?:the |our )?(?P<a2>[a-z][a-z -]{1,30}?)"
        r"(?: instead)?\b(?=[.,;!]| instead|$)",
        "plan.{attr}",
        head=True,
        intent=True,
        gate="migrate migrating move moving switch switching going",
    ),
    p(
        "plan",
        # "I'm going to learn Italian", "I'm learning Korean now".
        r"\b(?:learn|learning|studying|study) (?P<value>(?-i:[A-Z][a-z]+))\b",
        "user.learning",
        intent=True,
        gate="learn learning study studying",
    ),
    p(
        "attribute",
        # Not the object of a preposition: "communication with my partner is key" is not the
        # partner's value.
        NOT_AFTER_PREPOSITION
        + r"(?<!\bwith )\b(?P<owner>my|our|your) (?P<attr>[a-z][a-z -]{1,40}?) (?:is|are)(?: now)? "
        r"(?!not\b)",
        "{owner}.{attr}",
        tail=True,
        head=True,
    ),
    p(
        "state",
        # "moved the kayak to a storage unit", "we moved into the new Mission Bay office".
        r"\bmoved (?:in)?to (?:the |our |a )?(?:new )?(?P<value>(?-i:[A-Z][\w-]+(?: [A-Z][\w-]+)*))"
        r" (?P<attr>[a-z]{3,20})\b",
        "{owner}.{attr}",
        head=True,
        gate="moved",
    ),
    p(
        "state",
        r"\b(?:keep|keeps|store|stores|park|parks) (?:my |our |the )?(?P<attr>[a-z]{3,20}) "
        r"(?:in|at) (?P<value>[^.;]+)",
        "{owner}.{attr}",
        head=True,
        gate="keep keeps store stores park parks",
    ),
    p(
        "state",
        r"\b" + CHANGE_VERBS + r" (?:my |our |the |your |her |his )?"
        r"(?:(?!from\b)(?P<attr>[a-z][a-z -]{1,30}?) )?(?:from (?P<previous>.+?) )?to (?P<value>.+)",
        "{owner}.{attr}",
        head=True,
        gate="to",
    ),
)
