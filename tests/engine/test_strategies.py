"""The fast-path registry (engine/strategies.py): where each strategy applies, and that each
names a test comparing it with its plain path."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamspark.dataframe.windows import Count, Mean
from streamspark.engine.strategies import (
    COMPRESSED_STATE,
    COLUMNAR_WINDOWS,
    FUSED_GROUP_BY,
    FUSED_SOURCE,
    GROUP_BY_SHUFFLE,
    ONE_FLUSH_PER_PARTITION,
    PACKED_BUCKETS,
    RAW_SINK_CHUNKS,
    RELEASE_PLANNERS,
    STATE_READS_SOURCE,
    STRATEGIES,
    TASK_PER_CORE,
    Strategies,
)

from .plans import plan_of

ROOT = Path(__file__).resolve().parents[2]


def plan_paths(plan, plain=()) -> frozenset[str]:
    """The fast paths ``plan`` takes but those every plan, or every stateful one, takes (see the
    tests below)."""
    return Strategies(plain=plain).names_for(plan) - {RELEASE_PLANNERS.name, TASK_PER_CORE.name, COMPRESSED_STATE.name}


@pytest.mark.parametrize("strategy", [RELEASE_PLANNERS, TASK_PER_CORE], ids=lambda s: s.name)
def test_every_plan_takes_the_plan_wide_paths_unless_told_not_to(strategy):
    for plan in (
        plan_of(lambda app, sdf: sdf.apply(lambda v: v).to_topic(app.topic("out"))),
        plan_of(lambda app, sdf: sdf.apply(lambda v, state: v, stateful=True).to_topic(app.topic("out"))),
    ):
        assert strategy.name in Strategies().names_for(plan)
        assert strategy.name not in Strategies(plain={strategy.name}).names_for(plan)


def test_a_stateless_pipeline_takes_the_fused_source_only():
    plan = plan_of(lambda app, sdf: sdf.apply(lambda v: v).to_topic(app.topic("out")))
    assert plan_paths(plan) == {FUSED_SOURCE.name}


def test_a_topic_straight_into_a_sink_takes_raw_sink_chunks():
    from streamspark.sinks.core.list import ListSink

    plan = plan_of(lambda app, sdf: sdf.sink(ListSink()))
    assert plan_paths(plan) == {FUSED_SOURCE.name, RAW_SINK_CHUNKS.name}
    plan = plan_of(lambda app, sdf: sdf.apply(lambda v: v).sink(ListSink()))
    assert RAW_SINK_CHUNKS.name not in plan_paths(plan)


def test_a_stateful_pipeline_takes_packed_buckets():
    plan = plan_of(lambda app, sdf: sdf.apply(lambda v, state: v, stateful=True).to_topic(app.topic("out")))
    assert plan_paths(plan) == {PACKED_BUCKETS.name, ONE_FLUSH_PER_PARTITION.name}


def test_a_final_window_with_built_in_aggregations_takes_columnar_windows():
    plan = plan_of(lambda app, sdf: sdf.tumbling_window(1000).agg(n=Count(), avg=Mean("v")).final().to_topic(app.topic("out")))
    assert plan_paths(plan) == {PACKED_BUCKETS.name, COLUMNAR_WINDOWS.name, ONE_FLUSH_PER_PARTITION.name}
    window = plan.window_nodes()[0]
    assert COLUMNAR_WINDOWS.node_applies is not None and COLUMNAR_WINDOWS.node_applies(window)


def test_a_current_window_has_no_columnar_form():
    plan = plan_of(lambda app, sdf: sdf.tumbling_window(1000).agg(n=Count()).current().to_topic(app.topic("out")))
    assert COLUMNAR_WINDOWS.name not in plan_paths(plan)


def test_a_group_by_pipeline_takes_the_shuffle_and_the_fused_group_by():
    plan = plan_of(lambda app, sdf: sdf.group_by("g").apply(lambda v, state: v, stateful=True).to_topic(app.topic("out")))
    assert plan_paths(plan) == {GROUP_BY_SHUFFLE.name, FUSED_GROUP_BY.name}
    assert plan_paths(plan, {"fused-group-by"}) == {GROUP_BY_SHUFFLE.name}
    # the fused group_by builds on the shuffle
    assert plan_paths(plan, {"group-by-shuffle"}) == frozenset()


def test_every_stateful_pipeline_and_no_stateless_one_compresses_its_state():
    stateful = [
        lambda app, sdf: sdf.apply(lambda v, state: v, stateful=True).to_topic(app.topic("out")),
        lambda app, sdf: sdf.group_by("g").apply(lambda v, state: v, stateful=True).to_topic(app.topic("out")),
        lambda app, sdf: sdf.tumbling_window(1000).agg(n=Count()).final().to_topic(app.topic("out")),
    ]
    for build in stateful:
        plan = plan_of(build)
        assert COMPRESSED_STATE.name in Strategies().names_for(plan)
        assert COMPRESSED_STATE.name not in Strategies(plain={"compressed-state"}).names_for(plan)
    stateless = plan_of(lambda app, sdf: sdf.apply(lambda v: v).to_topic(app.topic("out")))
    assert COMPRESSED_STATE.name not in Strategies().names_for(stateless)


def test_a_group_by_after_a_stateful_step_takes_no_shuffle():
    plan = plan_of(lambda app, sdf: sdf.apply(lambda v, state: v, stateful=True).group_by("g").to_topic(app.topic("out")))
    assert GROUP_BY_SHUFFLE.name not in plan_paths(plan) and FUSED_GROUP_BY.name not in plan_paths(plan)


def test_one_flush_per_partition_needs_packed_buckets_and_at_least_once():
    plan = plan_of(lambda app, sdf: sdf.apply(lambda v, state: v, stateful=True).to_topic(app.topic("out")))
    assert plan_paths(plan, {"packed-buckets"}) == frozenset()
    plan.eos = object()  # exactly-once: every bucket commits its own transaction
    assert plan_paths(plan) == {PACKED_BUCKETS.name}


def _partitions(plan, n):
    from streamspark.models.topics.topic import TopicConfig

    for topic in plan.topics.values():
        topic.broker_config = TopicConfig(num_partitions=n, replication_factor=1)
    return plan


def test_a_stateful_plan_fits_buckets_by_partition_when_each_task_gets_a_partition():
    stateful = plan_of(lambda app, sdf: sdf.apply(lambda v, state: v, stateful=True).to_topic(app.topic("out")))
    assert not stateful.fits_partition_buckets(2)  # partition counts not read from a broker
    assert all(_partitions(stateful, n).fits_partition_buckets(2) for n in (2, 4, 5, 8))
    # fewer partitions than tasks, or one task busier than a quarter over an even share
    assert not any(_partitions(stateful, n).fits_partition_buckets(2) for n in (1, 3))
    assert _partitions(stateful, 3).fits_partition_buckets(1) and not _partitions(stateful, 6).fits_partition_buckets(4)
    assert not stateful.fits_partition_buckets(None)  # the stateful stage's tasks unknown (a cluster)
    stateless = _partitions(plan_of(lambda app, sdf: sdf.apply(lambda v: v).to_topic(app.topic("out"))), 4)
    regrouped = _partitions(
        plan_of(lambda app, sdf: sdf.group_by("room").apply(lambda v, state: v, stateful=True).to_topic(app.topic("out"))), 4
    )
    by_partition = _partitions(
        plan_of(
            lambda app, sdf: sdf.tumbling_window(1000).count().final(closing_strategy="partition").to_topic(app.topic("out"))
        ),
        4,
    )
    assert not any(plan.fits_partition_buckets(2) for plan in (stateless, regrouped, by_partition))


def test_state_buckets_read_the_source_when_the_checkpoint_buckets_by_partition():
    plan = plan_of(lambda app, sdf: sdf.apply(lambda v, state: v, stateful=True).to_topic(app.topic("out")))
    assert STATE_READS_SOURCE.name not in plan_paths(plan)
    plan.partition_buckets = True
    assert plan.by_partition and plan.bucket_by_number
    assert STATE_READS_SOURCE.name in plan_paths(plan)
    assert STATE_READS_SOURCE.name not in plan_paths(plan, {"state-reads-source"})
    # the state buckets read packed rows of ranges: not without the packed path
    assert STATE_READS_SOURCE.name not in plan_paths(plan, {"packed-buckets"})


def test_naming_a_strategy_plain_turns_it_off():
    plan = plan_of(lambda app, sdf: sdf.apply(lambda v: v).to_topic(app.topic("out")))
    assert plan_paths(plan, {"fused-source"}) == frozenset()


def test_an_unknown_strategy_name_is_refused():
    with pytest.raises(ValueError, match="Unknown fast path"):
        Strategies(plain={"turbo"})


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
def test_every_strategy_names_an_existing_test_of_both_paths(strategy):
    test_file = ROOT / strategy.checked_by
    assert test_file.is_file(), strategy.checked_by
    assert f'"{strategy.name}"' in test_file.read_text(), f"{strategy.checked_by} does not run the plain path of {strategy.name}"


def test_the_environment_names_the_plain_paths():
    assert Strategies.from_environment({}).plain == frozenset()
    chosen = Strategies.from_environment({"STREAMSPARK_PLAIN_PATHS": " one-flush-per-partition ,fused-source,"})
    assert chosen.plain == {"one-flush-per-partition", "fused-source"}
    with pytest.raises(ValueError, match="Unknown fast path"):
        Strategies.from_environment({"STREAMSPARK_PLAIN_PATHS": "fast"})
