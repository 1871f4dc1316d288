"""A checkpoint's state layout (``bucketing.checkpoint_state_layout``): how many buckets, and
which group key each bucket's rows get so that Spark spreads them evenly over the shuffle
partitions; chosen once and recorded in the checkpoint. Spark runs of each case are in
tests/state/test_stateful_e2e.py and tests/engine/test_packed_buckets.py."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from streamspark.engine.bucketing import (
    END_BUCKET_BASE,
    LEGACY_STATE_BUCKETS,
    STATE_BUCKETS_FILE,
    StateLayout,
    balanced_labels,
    bucket_of_group,
    checkpoint_state_layout,
    default_state_buckets,
    group_keys,
    spark_partition_of,
)
from streamspark.engine.session import SHUFFLE_PARTITIONS, planned_shuffle_partitions
from streamspark.state.exceptions import StateError


def _begin(checkpoint):
    (checkpoint / "commits").mkdir(parents=True)
    (checkpoint / "commits" / "0").write_text("v1\n{}\n")


def _record(checkpoint):
    return json.loads((checkpoint / STATE_BUCKETS_FILE).read_text())


@pytest.mark.parametrize("buckets,partitions", [(16, 2), (32, 4), (24, 3), (64, 8), (7, 3), (5, 8), (200, 16)])
def test_labels_spread_the_buckets_evenly_over_the_shuffle_partitions(buckets, partitions):
    labels = balanced_labels(buckets, partitions)
    assert len(set(labels)) == buckets and all(0 <= label < END_BUCKET_BASE for label in labels)
    placed = Counter(spark_partition_of(label, partitions) for label in labels)
    assert max(placed.values()) - min(placed.values()) <= 1 and len(placed) == min(buckets, partitions)
    assert [bucket_of_group(label, labels) for label in group_keys(buckets, labels)] == list(range(buckets))
    assert balanced_labels(buckets, partitions) == labels  # the same every time


def test_a_new_stateful_checkpoint_records_its_layout(tmp_path):
    checkpoint = tmp_path / "ck"
    layout = checkpoint_state_layout(checkpoint, None, 16, 2, stateful=True)
    assert layout == StateLayout(16, balanced_labels(16, 2))
    assert _record(checkpoint) == {"state_buckets": 16, "shuffle_partitions": 2, "stateful": True}
    _begin(checkpoint)
    # once it has micro-batches the record wins over another default and other partitions
    assert checkpoint_state_layout(checkpoint, None, 48, 6, stateful=True) == layout
    assert checkpoint_state_layout(checkpoint, 16, 48, 6, stateful=True) == layout
    assert checkpoint_state_layout(checkpoint, None, 48, 6, stateful=False) == layout


def test_unknown_shuffle_partitions_keep_the_bucket_numbers(tmp_path):
    checkpoint = tmp_path / "ck"
    assert checkpoint_state_layout(checkpoint, None, 64, None, stateful=True) == StateLayout(64, ())
    _begin(checkpoint)
    assert checkpoint_state_layout(checkpoint, None, 16, 2, stateful=True) == StateLayout(64, ())


def test_another_count_than_the_recorded_one_is_refused(tmp_path):
    checkpoint = tmp_path / "ck"
    checkpoint_state_layout(checkpoint, 5, 16, 2, stateful=True)
    _begin(checkpoint)
    assert checkpoint_state_layout(checkpoint, None, 16, 2, stateful=True).buckets == 5
    with pytest.raises(StateError, match="state_buckets=5, the application now uses 7"):
        checkpoint_state_layout(checkpoint, 7, 16, 2, stateful=True)
    assert _record(checkpoint)["state_buckets"] == 5


def test_a_record_without_micro_batches_is_chosen_again(tmp_path):
    checkpoint = tmp_path / "ck"
    checkpoint_state_layout(checkpoint, 5, 16, 2, stateful=True)  # a first run that never committed
    assert checkpoint_state_layout(checkpoint, None, 16, 4, stateful=True) == StateLayout(16, balanced_labels(16, 4))
    assert _record(checkpoint) == {"state_buckets": 16, "shuffle_partitions": 4, "stateful": True}


def test_a_stateless_checkpoint_keeps_its_count_until_a_stateful_run_chooses_one(tmp_path):
    """The count numbers a stateless run's exactly-once marker slots: it must not change
    between its runs (a replayed micro-batch would look for its markers in other slots)."""
    checkpoint = tmp_path / "ck"
    assert checkpoint_state_layout(checkpoint, None, 16, 2, stateful=False).buckets == 16
    assert _record(checkpoint) == {"state_buckets": 16, "shuffle_partitions": 2, "stateful": False}
    _begin(checkpoint)
    assert checkpoint_state_layout(checkpoint, None, 64, 2, stateful=False).buckets == 16
    assert checkpoint_state_layout(checkpoint, 8, 64, 2, stateful=False).buckets == 16
    # the first stateful run may still choose: its state begins now
    assert checkpoint_state_layout(checkpoint, 8, 64, 2, stateful=True) == StateLayout(8, balanced_labels(8, 2))
    assert _record(checkpoint) == {"state_buckets": 8, "shuffle_partitions": 2, "stateful": True}
    with pytest.raises(StateError, match="state_buckets=8"):
        checkpoint_state_layout(checkpoint, 16, 64, 2, stateful=True)


def test_a_checkpoint_begun_without_a_record_keeps_the_earlier_layout(tmp_path):
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    assert checkpoint_state_layout(checkpoint, None, 16, 2, stateful=True) == StateLayout(LEGACY_STATE_BUCKETS, ())
    assert LEGACY_STATE_BUCKETS == 64 and not (checkpoint / STATE_BUCKETS_FILE).exists()
    # a count given explicitly is passed on: reading the state refuses one it was not written with
    assert checkpoint_state_layout(checkpoint, 32, 16, 2, stateful=True) == StateLayout(32, ())


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[8]",
        '{"buckets": 4}',
        '{"state_buckets": 0}',
        '{"state_buckets": "8"}',
        '{"state_buckets": 8, "shuffle_partitions": true}',
        '{"state_buckets": 8, "stateful": "yes"}',
    ],
)
def test_an_unreadable_record_is_a_clear_error(tmp_path, text):
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    (checkpoint / STATE_BUCKETS_FILE).write_text(text)
    with pytest.raises(StateError, match=f"{STATE_BUCKETS_FILE}.*restore it.*clear_state"):
        checkpoint_state_layout(checkpoint, None, 16, 2, stateful=True)


def test_the_default_follows_the_shuffle_partitions_a_run_will_have(spark):
    assert default_state_buckets(planned_shuffle_partitions("local[2]")) == 16
    assert default_state_buckets(planned_shuffle_partitions("local[4]", {SHUFFLE_PARTITIONS: "3"})) == 24
    # a cluster's shuffle partitions are its own: the earlier default
    assert planned_shuffle_partitions("spark://host:7077") is None
    assert default_state_buckets(None) == LEGACY_STATE_BUCKETS
    # a running session's own setting
    assert planned_shuffle_partitions("local[8]", session=spark) == int(spark.conf.get(SHUFFLE_PARTITIONS))
