"""The applications the sources' kill -9 tests run as subprocesses (each runs until killed):

- ``replicator``: a KafkaReplicatorSource copying a topic of another cluster;
- ``numbers``: a StatefulSource numbering records 0..total-1, its position in its state, flushed
  every ``every`` records.

Either source's records go through a step on Spark to an output topic. Arguments: the kind,
then ``broker out state_dir group name guarantee``, then the kind's own (``source_broker
source_topic``, or ``total every pause``).
"""

import sys
import time

from streamspark import Application
from streamspark.dataframe import StreamingDataFrame
from streamspark.sources import KafkaReplicatorSource, StatefulSource


class Numbers(StatefulSource):
    """Produces ``{"n": 0}`` .. ``{"n": total - 1}``, one every ``pause`` seconds, resuming after
    the position of its last flush."""

    def __init__(self, name: str, total: int, every: int, pause: float) -> None:
        super().__init__(name)
        self.total, self.every, self.pause = total, every, pause

    def run(self) -> None:
        n = self.state.get("next", 0)
        while self.running and n < self.total:
            msg = self.serialize(key=str(n), value={"n": n})
            self.produce(key=msg.key, value=msg.value)
            n += 1
            self.state.set("next", n)
            if n % self.every == 0:
                self.flush()
            time.sleep(self.pause)


def replicator(app: Application, name: str, source_broker: str, source_topic: str) -> StreamingDataFrame:
    # a static member id: the restarted source takes the killed one's place in the source cluster's
    # consumer group at once (the embedded broker never expires a member that died without leaving)
    source = KafkaReplicatorSource(
        name,
        app.config,
        topic=source_topic,
        broker_address=source_broker,
        auto_offset_reset="earliest",
        consumer_extra_config={"group.instance.id": name},
    )
    return app.dataframe(source=source).apply(lambda v: {**v, "seen": True})


def numbers(app: Application, name: str, total: str, every: str, pause: str) -> StreamingDataFrame:
    sdf = app.dataframe(source=Numbers(name, int(total), int(every), float(pause)))
    return sdf.apply(lambda v: {**v, "square": v["n"] ** 2})


def main() -> None:
    kind, broker, out, state_dir, group, name, guarantee = sys.argv[1:8]
    app = Application(
        broker_address=broker,
        consumer_group=group,
        auto_offset_reset="earliest",
        state_dir=state_dir,
        commit_interval=0.5,
        processing_guarantee=guarantee,  # type: ignore[arg-type]
        loglevel="INFO",
        spark_master="local[2]",
    )
    pipeline = {"replicator": replicator, "numbers": numbers}[kind]
    pipeline(app, name, *sys.argv[8:]).to_topic(app.topic(out))
    app.run()


if __name__ == "__main__":
    main()
