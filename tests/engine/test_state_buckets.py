"""How many state buckets a checkpoint gets (``bucketing.checkpoint_state_buckets``), chosen
once and recorded in the checkpoint; a Spark run of each case is in tests/state/test_stateful_e2e.py."""

from __future__ import annotations

import json

import pytest

from streamspark.engine.bucketing import (
    LEGACY_STATE_BUCKETS,
    STATE_BUCKETS_FILE,
    checkpoint_state_buckets,
    default_state_buckets,
)
from streamspark.engine.session import SHUFFLE_PARTITIONS, planned_shuffle_partitions
from streamspark.state.exceptions import StateError


def _begin(checkpoint):
    (checkpoint / "commits").mkdir(parents=True)
    (checkpoint / "commits" / "0").write_text("v1\n{}\n")


def test_a_new_stateful_checkpoint_records_its_default(tmp_path):
    checkpoint = tmp_path / "ck"
    assert checkpoint_state_buckets(checkpoint, None, 16, stateful=True) == 16
    assert json.loads((checkpoint / STATE_BUCKETS_FILE).read_text()) == {"state_buckets": 16}
    _begin(checkpoint)
    # once it has micro-batches the record wins over another default
    assert checkpoint_state_buckets(checkpoint, None, 48, stateful=True) == 16


def test_an_explicit_count_wins_and_is_recorded(tmp_path):
    checkpoint = tmp_path / "ck"
    assert checkpoint_state_buckets(checkpoint, 5, 16, stateful=True) == 5
    _begin(checkpoint)
    assert checkpoint_state_buckets(checkpoint, None, 16, stateful=True) == 5
    # a different count asked for later is passed on: reading the state refuses it
    assert checkpoint_state_buckets(checkpoint, 7, 16, stateful=True) == 7
    assert json.loads((checkpoint / STATE_BUCKETS_FILE).read_text()) == {"state_buckets": 5}


def test_a_record_without_micro_batches_is_chosen_again(tmp_path):
    checkpoint = tmp_path / "ck"
    checkpoint_state_buckets(checkpoint, 5, 16, stateful=True)  # a first run that never committed
    assert checkpoint_state_buckets(checkpoint, None, 16, stateful=True) == 16
    assert json.loads((checkpoint / STATE_BUCKETS_FILE).read_text()) == {"state_buckets": 16}


def test_a_stateless_run_records_nothing(tmp_path):
    checkpoint = tmp_path / "ck"
    assert checkpoint_state_buckets(checkpoint, None, 16, stateful=False) == 16
    assert not (checkpoint / STATE_BUCKETS_FILE).exists()


def test_a_checkpoint_begun_without_a_record_keeps_the_earlier_default(tmp_path):
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    assert checkpoint_state_buckets(checkpoint, None, 16, stateful=True) == LEGACY_STATE_BUCKETS == 64
    assert not (checkpoint / STATE_BUCKETS_FILE).exists()
    assert checkpoint_state_buckets(checkpoint, 32, 16, stateful=True) == 32


@pytest.mark.parametrize("text", ["not json", '{"buckets": 4}', '{"state_buckets": 0}', '{"state_buckets": "8"}'])
def test_an_unreadable_record_is_a_clear_error(tmp_path, text):
    checkpoint = tmp_path / "ck"
    _begin(checkpoint)
    (checkpoint / STATE_BUCKETS_FILE).write_text(text)
    with pytest.raises(StateError, match=f"{STATE_BUCKETS_FILE}.*state_buckets="):
        checkpoint_state_buckets(checkpoint, None, 16, stateful=True)
    # the count given explicitly needs no record
    assert checkpoint_state_buckets(checkpoint, 8, 16, stateful=True) == 8


def test_the_default_follows_the_shuffle_partitions_a_run_will_have(spark):
    assert default_state_buckets(planned_shuffle_partitions("local[2]")) == 16
    assert default_state_buckets(planned_shuffle_partitions("local[4]", {SHUFFLE_PARTITIONS: "3"})) == 24
    # a cluster's shuffle partitions are its own: the earlier default
    assert default_state_buckets(planned_shuffle_partitions("spark://host:7077")) == LEGACY_STATE_BUCKETS
    # a running session's own setting
    assert planned_shuffle_partitions("local[8]", session=spark) == int(spark.conf.get(SHUFFLE_PARTITIONS))
