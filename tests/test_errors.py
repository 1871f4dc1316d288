"""Bad input and failures: clear errors naming topic/partition/offset, nothing committed past them."""

from __future__ import annotations

import base64
import json
import random
import traceback

import pytest

from streamspark.exceptions import PartitionAssignmentError, ProcessingError, QuixException
from streamspark.models.serializers import IgnoreMessage, JSONDeserializer

from .conftest import json_messages


def _mixed(kafka, topic):
    kafka.produce(topic, json_messages([{"i": 0}, {"i": 1}]))
    kafka.produce(topic, [{"value": b"{not json"}])  # offset 2
    kafka.produce(topic, json_messages([{"i": 3}]))


def test_malformed_json_without_callback_stops_with_location(make_app, kafka):
    topic = kafka.new_topic()
    _mixed(kafka, topic)
    app = make_app(consumer_group="malformed-1")
    app.dataframe(app.topic(topic))
    with pytest.raises(ProcessingError) as info:
        app.run(count=10, timeout=60)
    err = info.value
    assert (err.topic, err.partition, err.offset, err.stage) == (topic, 0, 2, "consumer")
    assert f'topic="{topic}" partition=0 offset=2' in str(err)
    assert isinstance(err.__cause__, Exception)
    # the failing micro-batch was not committed: a fixed run starts again at offset 0
    committed = kafka.committed("malformed-1", topic)
    assert committed[0] < 0 or committed[0] == 0

    skipped = []
    app2 = make_app(consumer_group="malformed-1", on_consumer_error=lambda exc, msg, log: skipped.append(msg.offset()) or True)
    app2.dataframe(app2.topic(topic))
    rows = app2.run(count=3, timeout=60)
    assert rows == [{"i": 0}, {"i": 1}, {"i": 3}]


def test_malformed_json_with_callback_skips_and_continues(make_app, kafka):
    topic = kafka.new_topic()
    _mixed(kafka, topic)
    seen = []

    def on_error(exc, message, logger):
        # runs in a Spark worker: record through the return value, verify via outputs
        return message.offset() == 2 and message.value() == b"{not json"

    app = make_app(on_consumer_error=on_error)
    app.dataframe(app.topic(topic)).update(lambda v: seen.append(v))
    rows = app.run(count=3, timeout=60)
    assert rows == [{"i": 0}, {"i": 1}, {"i": 3}]


def test_ignore_message_from_deserializer_skips_silently(make_app, kafka):
    class SkipOdd(JSONDeserializer):
        def __call__(self, value, ctx):
            data = super().__call__(value, ctx)
            if data["i"] % 2:
                raise IgnoreMessage()
            return data

    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"i": i} for i in range(6)]))
    app = make_app()
    app.dataframe(app.topic(topic, value_deserializer=SkipOdd()))
    assert app.run(count=3, timeout=60) == [{"i": 0}, {"i": 2}, {"i": 4}]


def test_processing_error_stops_unless_callback_skips(make_app, kafka):
    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"d": 1}, {"d": 0}, {"d": 2}]))
    app = make_app(consumer_group="proc-err")
    app.dataframe(app.topic(topic)).apply(lambda v: {"r": 10 // v["d"]})
    with pytest.raises(ProcessingError, match=r'processing failed at topic=".*" partition=0 offset=1: ZeroDivisionError') as info:
        app.run(count=3, timeout=60)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    # as in Quix Streams, where the user's exception leaves app.run(): except ZeroDivisionError works
    assert isinstance(info.value, ZeroDivisionError) and info.value.offset == 1

    app2 = make_app(consumer_group="proc-err", on_processing_error=lambda exc, row, log: isinstance(exc, ZeroDivisionError))
    app2.dataframe(app2.topic(topic)).apply(lambda v: {"r": 10 // v["d"]})
    assert app2.run(count=2, timeout=60) == [{"r": 10}, {"r": 5}]


def test_a_stateful_batch_reports_its_earliest_failing_record(make_app, kafka):
    """Keys live in state buckets that run apart; when several records fail, the error names
    the one Quix Streams (a record at a time, in offset order) would have stopped at."""
    topic = kafka.new_topic()
    values = [{"x": i} if i % 3 else {"no_x": i} for i in range(24)]  # offsets 0, 3, 6, ... fail
    kafka.produce(topic, json_messages(values, key=lambda v: f"k{next(iter(v.values())) % 8}".encode()))

    def running(value, state):
        total = state.get("t", 0) + value["x"]
        state.set("t", total)
        return total

    app = make_app()
    app.dataframe(app.topic(topic)).apply(running, stateful=True)
    with pytest.raises(ProcessingError, match=r"partition=0 offset=0: KeyError") as info:
        app.run(timeout=5)
    assert info.value.offset == 0


def test_unserializable_output_goes_to_producer_error(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, json_messages([{"i": 0}, {"i": 1}, {"i": 2}]))
    app = make_app(consumer_group="prod-err")
    sdf = app.dataframe(app.topic(src))
    # the "str" key serializer cannot take an int key for i == 1
    sdf.to_topic(app.topic(out, key_serializer="str"), key=lambda v: "k" if v["i"] != 1 else 1)
    with pytest.raises(ProcessingError, match="producer failed .* offset=1"):
        app.run(count=3, timeout=60)

    app2 = make_app(consumer_group="prod-err", on_producer_error=lambda exc, row, log: True)
    sdf2 = app2.dataframe(app2.topic(src))
    sdf2.to_topic(app2.topic(out, key_serializer="str"), key=lambda v: "k" if v["i"] != 1 else 1)
    app2.run(count=3, timeout=60)
    values = [json.loads(m.value()) for m in kafka.consume(out, expected=3)]
    # the first run produced offset 0 before failing (at-least-once), the second skipped offset 1
    assert values.count({"i": 2}) == 1 and {"i": 1} not in values and {"i": 0} in values


#: incompressible padding: the producers compress (lz4), and the output must stay above the limit
_PAD = base64.b64encode(random.Random(7).randbytes(300)).decode()


def _small_topic(kafka, max_bytes: int = 100) -> str:
    """A topic whose broker rejects record batches above ``max_bytes`` (a real delivery failure)."""
    from confluent_kafka.admin import NewTopic

    name = f"small-{kafka.new_topic()}"
    for fut in kafka.admin.create_topics([NewTopic(name, 1, 1, config={"max.message.bytes": str(max_bytes)})]).values():
        fut.result(30)
    return name


@pytest.mark.parametrize("failure", ["serializer", "produce"])
def test_an_output_error_goes_to_on_producer_error_then_to_its_records_on_processing_error(make_app, kafka, failure):
    """As the reference: an output that cannot be serialized (a set in a JSON value) or
    produced (``set_timestamp`` returning a float) is given to ``on_producer_error`` with the
    output; when that does not skip it, the record's ``on_processing_error`` gets the same
    error with the input record, and may skip the record."""
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, json_messages([{"i": i} for i in range(4)]))
    calls: list[tuple[str, str, object]] = []

    def on_producer_error(exc, row, logger):
        calls.append(("producer", type(exc).__name__, repr(row.value)))
        return False

    def on_processing_error(exc, row, logger):
        calls.append(("processing", type(exc).__name__, repr(row.value)))
        return True

    app = make_app(on_producer_error=on_producer_error, on_processing_error=on_processing_error)
    sdf = app.dataframe(app.topic(src))
    if failure == "serializer":
        sdf = sdf.apply(lambda v: {"i": {1, 2}} if v["i"] == 1 else v)
        expected = [("producer", "SerializationError", "{'i': {1, 2}}"), ("processing", "SerializationError", "{'i': 1}")]
    else:
        sdf = sdf.set_timestamp(lambda v, k, t, h: t + 0.5 if v["i"] == 1 else t)
        expected = [("producer", "TypeError", "{'i': 1}"), ("processing", "TypeError", "{'i': 1}")]
    sdf.to_topic(app.topic(out))
    app.run(count=3, timeout=60)
    assert calls == expected
    assert sorted(json.loads(m.value())["i"] for m in kafka.consume(out, expected=3)) == [0, 2, 3]


def test_an_output_error_no_callback_skips_stops_the_run_as_the_producers(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, json_messages([{"i": 0}, {"i": 1}]))
    processing: list[str] = []
    app = make_app(on_processing_error=lambda exc, row, logger: processing.append(type(exc).__name__) or False)
    app.dataframe(app.topic(src)).set_timestamp(lambda v, k, t, h: t + 0.5 if v["i"] == 1 else t).to_topic(app.topic(out))
    with pytest.raises(ProcessingError, match="producer failed .* offset=1") as info:
        app.run(count=2, timeout=60)
    assert (info.value.stage, info.value.offset) == ("producer", 1)
    assert isinstance(info.value, TypeError)  # the cause's type leaves run(), as in the reference
    assert processing == ["TypeError"]


def test_rejected_delivery_stops_the_batch_naming_the_output_topic(make_app, kafka):
    from streamspark.kafka.exceptions import KafkaProducerDeliveryError

    src, out = kafka.new_topic(), _small_topic(kafka)
    kafka.produce(src, json_messages([{"i": i, "pad": _PAD} for i in range(3)]))
    app = make_app(consumer_group="delivery-err")
    app.dataframe(app.topic(src)).to_topic(app.topic(out))
    with pytest.raises(ProcessingError, match=f'Delivery of a message to topic "{out}" partition 0 failed') as info:
        app.run(count=3, timeout=60)
    assert info.value.stage == "producer"
    assert isinstance(info.value.__cause__, KafkaProducerDeliveryError)
    assert "too large" in str(info.value.__cause__.error).lower()
    # nothing was committed: the input is read again by the next run
    committed = kafka.committed("delivery-err", src)
    assert committed[0] < 0 or committed[0] == 0


def test_rejected_deliveries_reach_on_producer_error_as_the_sent_messages(make_app, kafka):
    src, out = kafka.new_topic(), _small_topic(kafka)
    kafka.produce(src, json_messages([{"i": i, "pad": _PAD} for i in range(3)]))
    pad = _PAD

    def on_error(exc, row, log):
        # runs in a Spark worker: accept only what a rejected delivery of this app looks like
        return (
            type(exc).__name__ == "KafkaProducerDeliveryError"
            and row.topic == out
            and row.offset is None
            and json.loads(row.value)["pad"] == pad
            and row.key == b"k"
        )

    app = make_app(consumer_group="delivery-err-2", on_producer_error=on_error)
    app.dataframe(app.topic(src)).to_topic(app.topic(out, key_serializer="str"), key=lambda v: "k")
    assert len(app.run(count=3, timeout=60)) == 3  # the run went through: every failure was accepted
    assert kafka.committed("delivery-err-2", src)[0] == 3
    assert kafka.high_watermarks(out)[0] == 0


def test_a_processing_error_of_the_causes_type_shows_and_pickles_as_a_processing_error():
    import copy
    import pickle

    from streamspark.exceptions.base import processing_error

    err = processing_error("processing failed at offset=4: KeyError: 'x'", KeyError("x"), topic="t", partition=0, offset=4)
    assert isinstance(err, KeyError) and isinstance(err, ProcessingError)
    assert str(err) == "processing failed at offset=4: KeyError: 'x'"  # not quoted as a KeyError's
    assert traceback.format_exception_only(err)[-1] == f"streamspark.exceptions.ProcessingError: {err}\n"
    err.worker_traceback = "Traceback ..."  # type: ignore[attr-defined]
    for again in (pickle.loads(pickle.dumps(err)), copy.copy(err), copy.deepcopy(err)):
        assert isinstance(again, KeyError) and isinstance(again, ProcessingError)
        assert (str(again), again.topic, again.offset, again.worker_traceback) == (str(err), "t", 4, "Traceback ...")
    assert type(processing_error("boom", None)) is ProcessingError

    class Local(Exception):  # not importable: pickled as a plain ProcessingError
        def __init__(self, code):
            super().__init__(f"code {code}")
            self.code = code

    local = processing_error("boom", Local(7), offset=1)
    assert isinstance(local, Local) and local.code == 7 and str(local) == "boom"  # its __init__ not run again
    again = pickle.loads(pickle.dumps(local))
    assert type(again) is ProcessingError and again.code == 7 and again.offset == 1


def test_exceptions_show_the_package_path_and_share_the_base():
    err = ProcessingError("boom", topic="t", partition=0, offset=3)
    assert traceback.format_exception_only(err)[-1] == "streamspark.exceptions.ProcessingError: boom\n"
    assert issubclass(ProcessingError, QuixException) and issubclass(PartitionAssignmentError, QuixException)


def test_kafka_exceptions_at_the_reference_paths():
    from confluent_kafka import KafkaError

    from streamspark.exceptions import BrokerUnreachableError, KafkaPartitionError
    from streamspark.kafka.exceptions import (
        BaseKafkaException,
        InvalidProducerConfigError,
        KafkaBrokerUnavailableError,
        KafkaConsumerException,
        KafkaProducerDeliveryError,
    )

    assert issubclass(KafkaPartitionError, QuixException) and issubclass(InvalidProducerConfigError, QuixException)
    assert issubclass(KafkaConsumerException, BaseKafkaException) and issubclass(BaseKafkaException, QuixException)
    assert issubclass(KafkaProducerDeliveryError, BaseKafkaException)
    with pytest.raises(KafkaBrokerUnavailableError):
        raise BrokerUnreachableError("no answer")
    err = KafkaConsumerException(KafkaError(KafkaError._PARTITION_EOF))
    assert err.code == KafkaError._PARTITION_EOF and err.description == "Broker: No more messages"
    assert str(err) == '<KafkaConsumerException code="-191" description="Broker: No more messages">'  # as the reference
    delivery = KafkaProducerDeliveryError("Broker: Message size too large", topic="out", partition=0)
    assert str(delivery) == 'Delivery of a message to topic "out" partition 0 failed: Broker: Message size too large'
