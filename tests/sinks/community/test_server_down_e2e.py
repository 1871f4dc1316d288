"""Real sink servers that go down: the micro-batch fails, nothing is committed, nothing is lost.

PostgreSQL 15 and Redis 7 (Debian packages, real servers) serve a first run; then both are
stopped and more records arrive; the second run must fail with the servers' errors and leave
the consumer group's offsets where they were. Once the servers are back on the same ports
(PostgreSQL with its data), a third run delivers everything: PostgreSQL holds every record
exactly once (delivery tokens), Redis every record the failed run could not write.
"""

from __future__ import annotations

import json

import psycopg2
import pytest
import redis

from streamspark.exceptions import ProcessingError
from streamspark.sinks.community.postgresql import PostgreSQLSink
from streamspark.sinks.community.redis import RedisSink
from tests.servers.servers import PostgreSQL, Redis

N = 20  # records per phase


def test_servers_down_fail_the_batch_and_their_return_delivers_everything(make_app, kafka, tmp_path):
    pg, rd = PostgreSQL().start(), Redis().start()
    try:
        topic = kafka.new_topic(partitions=2)

        def produce(lo: int, hi: int) -> None:
            kafka.produce(
                topic,
                [
                    {
                        "value": json.dumps({"i": i}).encode(),
                        "key": f"id{i}".encode(),
                        "partition": i % 2,
                        "timestamp": 1_700_000_000_000 + i,
                    }
                    for i in range(lo, hi)
                ],
            )

        sinks = [
            PostgreSQLSink(
                host="127.0.0.1",
                port=pg.port,
                dbname="postgres",
                user=pg.user,
                password="",
                table_name="down_e2e",
                connection_timeout_seconds=2,
            ),
            RedisSink(host="127.0.0.1", port=rd.port, db=0, socket_timeout=2),
        ]

        def run() -> None:
            app = make_app(consumer_group="server-down-e2e", state_dir=str(tmp_path / "state"))
            sdf = app.dataframe(app.topic(topic))
            for sink in sinks:
                sdf.sink(sink)
            app.run(count=N * len(sinks), timeout=60)

        produce(0, N)
        run()
        assert sum(kafka.committed("server-down-e2e", topic).values()) == N

        pg.stop(keep_data=True)
        rd.stop(keep_data=True)
        produce(N, 2 * N)
        with pytest.raises(ProcessingError, match="refused the connection|is unreachable"):
            run()
        assert sum(kafka.committed("server-down-e2e", topic).values()) == N, "the failed batch was not committed"

        pg.start()
        rd.start()
        run()
        assert sum(kafka.committed("server-down-e2e", topic).values()) == 2 * N

        with psycopg2.connect(host="127.0.0.1", port=pg.port, user=pg.user, dbname="postgres") as conn:
            with conn.cursor() as cur:
                cur.execute("SELECT i FROM down_e2e ORDER BY i")
                assert [r[0] for r in cur.fetchall()] == list(range(2 * N)), "PostgreSQL: every record exactly once"
        # Redis keeps no data across its restart (no persistence): it holds what the third run delivered
        r = redis.Redis(port=rd.port, db=0)
        assert sorted(json.loads(r.get(f"id{i}"))["i"] for i in range(N, 2 * N)) == list(range(N, 2 * N))
        assert r.dbsize() == N
    finally:
        pg.stop()
        rd.stop()
