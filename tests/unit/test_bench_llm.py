"""The answer judge of `graphmem bench llm` (SQuAD-style token F1, dates compared as days) and
its side-by-side of the two deciders."""

from datetime import date

import pytest

from graphmem.bench.llm import compare_deciders, correct, one_date, same_date, token_f1


@pytest.mark.parametrize(("prediction", "gold"), [
    ("2023-05-07", "7 May 2023"), ("2 July 2023", "2023-07-02"), ("July 2, 2023", "2 July 2023")])
def test_the_same_day_written_two_ways_is_the_same_date(prediction: str, gold: str) -> None:
    assert same_date(prediction, gold)


@pytest.mark.parametrize(("prediction", "gold"), [
    ("2023-05-20", "The sunday before 25 May 2023"),  # a reasoning answer, not a date
    ("2023-05-08", "7 May 2023"), ("2022", "2022"),  # a year alone is not a day
    ("2016-12-01", "10 years ago")])  # relative: never resolved against today
def test_other_answers_are_not_the_same_date(prediction: str, gold: str) -> None:
    assert not same_date(prediction, gold)


def test_one_date_needs_day_month_and_year() -> None:
    assert one_date("7 May 2023") == date(2023, 5, 7)
    assert one_date("July 2023") is None and one_date("") is None


def test_token_f1() -> None:
    assert token_f1("painting, pottery", "pottery, camping, painting, swimming") == pytest.approx(
        2 / 3)
    assert token_f1("The beach", "beach") == 1.0 and token_f1("x", "") == 0.0


def test_compare_deciders_pairs_questions() -> None:
    def row(category: int, recall: float, rounds: int, stop: str) -> dict[str, object]:
        return {"category": category, "recall": recall, "rounds": rounds, "decider_calls": rounds,
                "stop": stop}

    offline = [row(1, 0.5, 1, "sufficient"), row(2, 1.0, 2, "rounds"), row(2, 0.0, 1, "sufficient")]
    llm = [row(1, 1.0, 2, "sufficient"), row(2, 1.0, 1, "sufficient"), row(2, 0.0, 3, "rounds")]
    out = compare_deciders(offline, llm)
    assert out["questions"] == 3
    assert out["offline_recall_at_10"] == 0.5 and out["llm_recall_at_10"] == 0.6667
    assert out["by_category"]["2"] == {"n": 2, "offline": 0.5, "llm": 0.5}
    assert (out["llm_better"], out["llm_worse"]) == (1, 0)
    assert out["second_round"] == {"offline": 1, "llm": 2}
    assert out["stops"]["llm"] == {"sufficient": 2, "rounds": 1}


def test_correct_is_exact_same_day_or_f1_half() -> None:
    row = {"exact": False, "same_date": False, "f1": 0.49}
    assert not correct(row)
    assert correct({**row, "f1": 0.5})
    assert correct({**row, "exact": True})
    assert correct({**row, "same_date": True})
