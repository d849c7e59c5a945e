"""``forecast.plain_words``, ``versus_*`` and the CLI's ``align_money``: the rules behind issue
#42's finance words, on hand-written sentences."""

from __future__ import annotations

from trainbill.cli._tables import align_money
from trainbill.forecasting import plain_words


def test_a_parenthetical_naming_a_field_is_left_out() -> None:
    assert (
        plain_words("no deadline in the plan (run.deadline_hours) to check against")
        == "no deadline in the plan to check against"
    )


def test_a_clause_telling_an_engineer_what_to_run_is_left_out() -> None:
    text = (
        "$563 is priced from UNVERIFIED sources: FSx; 'trainbill prices update' or --catalog DIR "
        "with your rates replaces them"
    )
    assert plain_words(text) == "$563 is priced from UNVERIFIED sources: FSx"


def test_a_sentence_built_on_a_key_names_the_field_in_words() -> None:
    assert (
        plain_words("data.location = cross_az has no cost for data in s3")
        == "Data location cross_az has no cost for data in s3"
    )


def test_endpoints_and_flags_go_and_plain_text_is_untouched() -> None:
    assert plain_words("every change re-prices the plan (POST /v1/forecast)") == (
        "every change re-prices the plan"
    )
    same = "spot prices differ by zone and move: $20.99/h is the use1-az3 price of 2025-01-01"
    assert plain_words(same) == same
    # An instance name and a sentence ending in "data." are not keys.
    assert plain_words("p5.48xlarge reads its data. Then it trains.") == (
        "p5.48xlarge reads its data. Then it trains."
    )


def test_money_decimal_points_line_up() -> None:
    # Widest whole part "$1,983" (6 characters), longest tail ".0125" (5): "$0" gets 6 - 2 = 4
    # spaces in front, ".68" 5 - 3 = 2 behind, "$1" 4 in front and 5 behind.
    got = align_money(["$0.0125", "$1,983.68", "", "$1"])
    assert got == ["    $0.0125", "$1,983.68  ", "", "    $1     "]
    assert len({c.index(".") for c in got if "." in c}) == 1
