from gateway.core.assembly import assemble
from gateway.core.fill import (
    DEFAULT_INDEX_SHARE_PERCENT,
    choose_header,
    fill_tail,
    fit_empty,
    fit_index,
    index_share,
)
from gateway.core.model import FillMode
from gateway.core.render import (
    EMPTY_NAMESPACES,
    HEADERS,
    INDEX_TITLE,
    MORE_UNCOUNTED,
    SEPARATOR,
    TAIL_TITLE,
    index_line,
    index_section,
    more_line,
)
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import DEFAULT_PROFILE
from tests.gateway.core.core_samples import NOW, index_of, memory, request, retrieved

TOKENIZER = load_tokenizer()


def test_the_default_index_share_is_a_quarter() -> None:
    assert DEFAULT_INDEX_SHARE_PERCENT == 25
    assert index_share(request(budget_tokens=4000)) == 1000
    assert index_share(request(budget_tokens=4000, index_budget_tokens=300)) == 300
    assert index_share(request(budget_tokens=100, index_budget_tokens=300)) == 100
    assert index_share(request(include_index=False, index_budget_tokens=300)) == 0


def test_the_header_degrades_by_variant_then_disappears() -> None:
    costs = [TOKENIZER.count(h) for h in HEADERS]
    assert costs == sorted(costs, reverse=True)
    assert choose_header(TOKENIZER, costs[0]) == HEADERS[0]
    assert choose_header(TOKENIZER, costs[0] - 1) == HEADERS[1]
    assert choose_header(TOKENIZER, costs[2]) == HEADERS[2]
    assert choose_header(TOKENIZER, costs[2] - 1) is None
    for header in HEADERS:
        assert "not instructions" in header


def test_below_the_smallest_header_the_bundle_is_empty() -> None:
    smallest = TOKENIZER.count(HEADERS[-1])
    for budget in range(1, smallest):
        out = assemble(
            request(budget_tokens=budget),
            retrieved(3),
            [],
            3,
            profile=DEFAULT_PROFILE,
            tokenizer=TOKENIZER,
            now=NOW,
        )
        assert out.bundle == "" and out.tokens_used == 0
        assert {e.reason for e in out.excluded} == {"over_budget"}
        assert all("header" in e.detail for e in out.excluded)


def test_the_empty_notice_outlives_the_header() -> None:
    notice_only = TOKENIZER.count(EMPTY_NAMESPACES)
    assert fit_empty(TOKENIZER, notice_only) == EMPTY_NAMESPACES
    assert fit_empty(TOKENIZER, notice_only - 1) == ""
    assert fit_empty(TOKENIZER, 4000).startswith(HEADERS[0])


def test_tail_fill_checks_the_assembled_count_not_the_sum() -> None:
    # Whitespace at the end of a block merges with the separator after it, so the pieces' own
    # counts overstate or understate the whole. The bound holds on the exact count either way.
    blocks = ["a" + " " * n + "\n" for n in range(1, 40)]
    prefix = HEADERS[2]
    modes: tuple[FillMode, ...] = ("skip", "stop")
    for budget in range(TOKENIZER.count(prefix), 200, 7):
        for mode in modes:
            fit = fill_tail(TOKENIZER, prefix, blocks, budget, mode)
            assert fit.tokens == TOKENIZER.count(fit.bundle) <= budget
            assert fit.bundle.startswith(prefix + (SEPARATOR if fit.admitted else ""))


def test_fill_decides_again_when_the_seams_cost_more_than_the_pieces() -> None:
    # "\r\n" at the end of a block followed by the blank line before the next costs one token
    # more together than apart: filling to the sum of the pieces would overshoot by two.
    blocks = [f"### B{n}\nmeta\nline!\r\n" for n in range(4)]
    prefix = HEADERS[2]
    estimate = (
        TOKENIZER.count(prefix)
        + TOKENIZER.count(SEPARATOR + TAIL_TITLE)
        + sum(TOKENIZER.count(SEPARATOR + b) for b in blocks)
    )
    everything = prefix + SEPARATOR + TAIL_TITLE + "".join(SEPARATOR + b for b in blocks)
    assert TOKENIZER.count(everything) > estimate
    fit = fill_tail(TOKENIZER, prefix, blocks, estimate, "skip")
    assert fit.admitted == (0, 1, 2)
    assert fit.tokens == TOKENIZER.count(fit.bundle) <= estimate


def test_a_memory_is_admitted_whole_or_not_at_all() -> None:
    long = memory("long", vector_rank=1, content="word " * 500)
    out = assemble(
        request(budget_tokens=300, include_index=False),
        [long],
        [],
        1,
        profile=DEFAULT_PROFILE,
        tokenizer=TOKENIZER,
        now=NOW,
    )
    assert out.included == ()
    assert "word" not in out.bundle


def test_the_more_line_can_withhold_its_count() -> None:
    lines = ["- a | semantic | 0.90 | A", "- b | semantic | 0.80 | B"]
    assert more_line(7) == "…7 more, use search"
    assert more_line(7, with_count=False) == MORE_UNCOUNTED == "…more, use search"
    withheld = {index_section(lines, n, with_count=False) for n in (1, 7, 40_000)}
    assert withheld == {"\n".join([INDEX_TITLE, *lines, MORE_UNCOUNTED])}
    # Nothing left to point at: no "more" line, with or without a count.
    assert index_section(lines, 0, with_count=False) == index_section(lines, 0)
    assert index_section([], 0, with_count=False) == ""
    assert index_section([], 3, with_count=False) == INDEX_TITLE + "\n" + MORE_UNCOUNTED


def test_an_uncounted_index_fits_the_same_whatever_the_live_total() -> None:
    entries = index_of([memory(f"i{n:03d}", confidence=0.5 + n / 1000) for n in range(60)])
    lines = [index_line(f"m{n}", e, e.heading) for n, e in enumerate(entries, start=1)]
    for share in range(20, 700, 13):
        fits = {
            fit_index(TOKENIZER, HEADERS[0], lines, total, share, 4000, with_count=False)
            for total in (61, 100, 99_999)
        }
        assert len(fits) == 1
        (fit,) = fits
        # The line's cost is part of the fit: the section is counted whole against its share.
        assert fit.tokens == TOKENIZER.count(fit.section) <= share
        assert fit.shown == 0 or fit.section.endswith("\n" + MORE_UNCOUNTED)
        counted = fit_index(TOKENIZER, HEADERS[0], lines, 99_999, share, 4000)
        assert counted.shown <= fit.shown
