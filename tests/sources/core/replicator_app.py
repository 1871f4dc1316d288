"""An application run as a subprocess by the replicator's kill -9 test: a KafkaReplicatorSource
copying a topic of another cluster, its records forwarded to an output topic, forever."""

import sys

from streamspark import Application
from streamspark.sources import KafkaReplicatorSource


def main() -> None:
    broker, source_broker, source_topic, out, state_dir, group, name, guarantee = sys.argv[1:9]
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
    # a static member id: the restarted source takes the killed one's place in the source cluster's
    # consumer group at once (the embedded broker never expires a member that died without leaving)
    source = KafkaReplicatorSource(name, app.config, topic=source_topic, broker_address=source_broker,
                                   auto_offset_reset="earliest", consumer_extra_config={"group.instance.id": name})
    sdf = app.dataframe(source=source)
    sdf = sdf.apply(lambda v: {**v, "seen": True})
    sdf.to_topic(app.topic(out))
    app.run()


if __name__ == "__main__":
    main()
