"""A checkpoint's state layout (``bucketing.checkpoint_state_layout``): how many buckets, and
which group key each bucket's rows get so that Spark spreads them evenly over the shuffle
partitions; chosen once and recorded in the checkpoint. Spark runs of each case are in
tests/state/test_stateful_e2e.py and tests/engine/test_packed_buckets.py."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from streamspark.engine.bucketing import (
    BUCKETS_PER_PARTITION,
    END_BUCKET_BASE,
    LEGACY_STATE_BUCKETS,
    STATE_BUCKETS_FILE,
    StateLayout,
    balanced_labels,
    bucket_of_group,
    checkpoint_state_layout,
    default_state_buckets,
    spark_partition_of,
)
from streamspark.engine.session import SHUFFLE_PARTITIONS, planned_shuffle_partitions
from streamspark.state.exceptions import StateError


def _begin(checkpoint, log="commits"):
    (checkpoint / log).mkdir(parents=True)
    (checkpoint / log / "0").write_text("v1\n{}\n")


def _record(checkpoint):
    return json.loads((checkpoint / STATE_BUCKETS_FILE).read_text())


@pytest.mark.parametrize("int_keys", [False, True])
@pytest.mark.parametrize("buckets,partitions", [(16, 2), (32, 4), (24, 3), (64, 8), (7, 3), (5, 8), (200, 16)])
def test_labels_spread_the_buckets_evenly_over_the_shuffle_partitions(buckets, partitions, int_keys):
    labels = balanced_labels(buckets, partitions, int_keys)
    assert len(set(labels)) == buckets and all(0 <= label < END_BUCKET_BASE for label in labels)
    placed = Counter(spark_partition_of(label, partitions, int_keys) for label in labels)
    assert max(placed.values()) - min(placed.values()) <= 1 and len(placed) == min(buckets, partitions)
    assert [bucket_of_group(label, labels) for label in labels] == list(range(buckets))
    assert [bucket_of_group(bucket, ()) for bucket in range(buckets)] == list(range(buckets))
    assert balanced_labels(buckets, partitions, int_keys) == labels  # the same every time


def test_a_group_key_that_is_no_label_is_a_state_error():
    with pytest.raises(StateError, match=f"group key 3 is none of the 4 bucket labels.*{STATE_BUCKETS_FILE}"):
        bucket_of_group(3, balanced_labels(4, 2))


@pytest.mark.parametrize("key_type", ["bigint", "int"])
def test_spark_places_the_labels_evenly(spark, key_type):
    """The rows of each label reach the shuffle partition Python computed, through Spark's own
    hash partitioning of a bigint key (the packed and plain paths) or an int key (group_by)."""
    from pyspark.sql import functions as F

    for buckets, partitions in ((16, 2), (24, 3), (40, 5)):
        labels = balanced_labels(buckets, partitions, int_keys=key_type == "int")
        df = spark.createDataFrame([(label,) for label in labels], f"_bucket {key_type}")
        rows = df.repartition(partitions, "_bucket").select("_bucket", F.spark_partition_id().alias("p")).collect()
        assert {r["_bucket"]: r["p"] for r in rows} == {label: i % partitions for i, label in enumerate(labels)}


def test_a_new_checkpoint_records_its_layout(tmp_path):
    checkpoint = tmp_path / "ck"
    layout = checkpoint_state_layout(checkpoint, None, 16, 2)
    assert layout == StateLayout(16, balanced_labels(16, 2))
    assert _record(checkpoint) == {
        "state_buckets": 16,
        "shuffle_partitions": 2,
        "labels": list(layout.labels),
        "bucket_by": "key",
    }
    _begin(checkpoint)
    # once it has micro-batches the record wins over another default and other partitions
    assert checkpoint_state_layout(checkpoint, None, 48, 6) == layout
    assert checkpoint_state_layout(checkpoint, 16, 48, 6, int_keys=True) == layout


def test_a_new_checkpoint_records_buckets_by_partition_and_keeps_them(tmp_path):
    checkpoint = tmp_path / "ck"
    layout = checkpoint_state_layout(checkpoint, None, 16, 2, by_partition=True)
    assert layout == StateLayout(16, balanced_labels(16, 2), by_partition=True)
    assert _record(checkpoint)["bucket_by"] == "partition_number"
    _begin(checkpoint)
    # the checkpoint's way wins over what a later run would choose for a new one, both ways
    assert checkpoint_state_layout(checkpoint, None, 16, 2, by_partition=False).by_partition
    keyed = tmp_path / "keyed"
    checkpoint_state_layout(keyed, None, 16, 2)
    _begin(keyed)
    assert not checkpoint_state_layout(keyed, None, 16, 2, by_partition=True).by_partition


def test_a_record_without_bucket_by_buckets_by_key(tmp_path):
    """Records written before state could be bucketed by partition."""
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    (checkpoint / STATE_BUCKETS_FILE).write_text(json.dumps({"state_buckets": 3, "shuffle_partitions": 2, "labels": []}))
    assert checkpoint_state_layout(checkpoint, None, 16, 2, by_partition=True) == StateLayout(3, (), by_partition=False)


def test_the_recorded_labels_are_used_as_they_are(tmp_path):
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    (checkpoint / STATE_BUCKETS_FILE).write_text(json.dumps({"state_buckets": 3, "shuffle_partitions": 2, "labels": [9, 4, 7]}))
    assert checkpoint_state_layout(checkpoint, None, 16, 2) == StateLayout(3, (9, 4, 7))


def test_a_planned_micro_batch_makes_the_layout_binding(tmp_path):
    """A replay of a micro-batch that never committed must number buckets (and exactly-once
    marker slots) as its first attempt did."""
    checkpoint = tmp_path / "ck"
    layout = checkpoint_state_layout(checkpoint, None, 16, 2)
    _begin(checkpoint, "offsets")
    assert checkpoint_state_layout(checkpoint, None, 24, 3) == layout
    with pytest.raises(StateError, match="state_buckets=16, the application now uses 24"):
        checkpoint_state_layout(checkpoint, 24, 24, 3)


def test_unknown_shuffle_partitions_keep_the_bucket_numbers(tmp_path):
    checkpoint = tmp_path / "ck"
    assert checkpoint_state_layout(checkpoint, None, 64, None) == StateLayout(64, ())
    assert _record(checkpoint) == {"state_buckets": 64, "shuffle_partitions": None, "labels": [], "bucket_by": "key"}
    _begin(checkpoint)
    assert checkpoint_state_layout(checkpoint, None, 16, 2) == StateLayout(64, ())


def test_another_count_than_the_recorded_one_is_refused(tmp_path):
    checkpoint = tmp_path / "ck"
    checkpoint_state_layout(checkpoint, 5, 16, 2)
    _begin(checkpoint)
    assert checkpoint_state_layout(checkpoint, None, 16, 2).buckets == 5
    with pytest.raises(StateError, match="state_buckets=5, the application now uses 7"):
        checkpoint_state_layout(checkpoint, 7, 16, 2)
    assert _record(checkpoint)["state_buckets"] == 5


def test_a_record_without_micro_batches_is_chosen_again(tmp_path):
    checkpoint = tmp_path / "ck"
    checkpoint_state_layout(checkpoint, 5, 16, 2)  # a first run that stopped before its first micro-batch
    assert checkpoint_state_layout(checkpoint, None, 16, 4, int_keys=True) == StateLayout(16, balanced_labels(16, 4, True))
    assert _record(checkpoint)["state_buckets"] == 16 and not (checkpoint / (STATE_BUCKETS_FILE + ".tmp")).exists()


def test_a_checkpoint_begun_without_a_record_keeps_the_earlier_layout(tmp_path):
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    assert checkpoint_state_layout(checkpoint, None, 16, 2) == StateLayout(LEGACY_STATE_BUCKETS, ())
    assert LEGACY_STATE_BUCKETS == 64 and not (checkpoint / STATE_BUCKETS_FILE).exists()
    # a count given explicitly is passed on: reading the state refuses one it was not written with
    assert checkpoint_state_layout(checkpoint, 32, 16, 2) == StateLayout(32, ())


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[8]",
        '{"buckets": 4}',
        '{"state_buckets": 0}',
        '{"state_buckets": "8"}',
        '{"state_buckets": true}',
        '{"state_buckets": 2, "labels": [1]}',
        '{"state_buckets": 2, "bucket_by": "topic"}',
        '{"state_buckets": 2, "labels": [1, 1]}',
        '{"state_buckets": 2, "labels": [1, -2]}',
        '{"state_buckets": 2, "labels": "12"}',
        '{"state_buckets": 2, "labels": [true, false]}',
    ],
)
def test_an_unreadable_record_is_a_clear_error(tmp_path, text):
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    (checkpoint / STATE_BUCKETS_FILE).write_text(text)
    with pytest.raises(StateError, match=f"{STATE_BUCKETS_FILE}.*restore it.*clear_state"):
        checkpoint_state_layout(checkpoint, None, 16, 2)


def test_the_default_follows_the_shuffle_partitions_a_run_will_have(spark):
    assert default_state_buckets(planned_shuffle_partitions("local[2]")) == 2 * BUCKETS_PER_PARTITION == 32
    assert default_state_buckets(planned_shuffle_partitions("local[4]", {SHUFFLE_PARTITIONS: "3"})) == 48
    # a cluster's shuffle partitions are its own: the earlier default
    assert planned_shuffle_partitions("spark://host:7077") is None
    assert default_state_buckets(None) == LEGACY_STATE_BUCKETS
    # a running session's own setting
    assert planned_shuffle_partitions("local[8]", session=spark) == int(spark.conf.get(SHUFFLE_PARTITIONS))
