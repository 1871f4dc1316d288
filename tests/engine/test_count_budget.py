"""The record budget of ``app.run(count=N)``: the first budget over the plan's branch ends."""

from __future__ import annotations

from streamspark.engine.count_budget import CountBudget, read_budget

from .plans import plan_of


def test_one_branch_gives_one_output_per_record():
    assert plan_of().outputs_per_record() == 1
    assert plan_of(lambda app, sdf: sdf.apply(lambda v: v).filter(bool)).outputs_per_record() == 1


def test_each_branch_end_counts():
    def two_branches(app, sdf):
        sdf.apply(lambda v: v).to_topic(app.topic("a"))
        sdf.apply(lambda v: v).to_topic(app.topic("b"))

    def three_ends(app, sdf):
        left = sdf.apply(lambda v: v)
        left.apply(lambda v: v)
        left.apply(lambda v: v)
        sdf.update(print)

    assert plan_of(two_branches).outputs_per_record() == 2
    assert plan_of(three_ends).outputs_per_record() == 3


def test_a_merged_stream_counts_the_ends_below_its_merge():
    def concat_then_split(app, sdf):
        merged = sdf.concat(app.dataframe(app.topic("more")))
        merged.apply(lambda v: v)
        merged.apply(lambda v: v)

    assert plan_of(concat_then_split).outputs_per_record() == 2


def test_an_expand_makes_the_outputs_per_record_unknown_and_the_first_budget_one_record():
    assert plan_of(lambda app, sdf: sdf.apply(lambda v: [v, v], expand=True)).outputs_per_record() is None
    budget = CountBudget(10, outputs_per_record=None)
    try:
        assert read_budget(budget.path) == 1
        budget.update(inputs=1, outputs=3)  # three outputs a record: 7 left, 3 records
        assert read_budget(budget.path) == 3
    finally:
        budget.close()


def test_the_first_budget_is_the_count_over_the_outputs_per_record():
    for count, per_record, first in [(10, 1, 10), (10, 2, 5), (9, 2, 5), (1, 3, 1)]:
        budget = CountBudget(count, outputs_per_record=per_record)
        try:
            assert read_budget(budget.path) == first
        finally:
            budget.close()
