"""PostgreSQLSink, RedisSink, MongoDBSink (nx-27017 emulator) and ElasticsearchSink (osmem
OpenSearch-compatible emulator) on their own: what lands in the server, read back with the
server's client, and what happens when the server is down or refuses."""

from __future__ import annotations

import json

import psycopg2
import pymongo
import pytest
import redis

from streamspark.sinks.community.elasticsearch import ElasticsearchBulkError, ElasticsearchSink
from streamspark.sinks.community.mongodb import MongoDBSink
from streamspark.sinks.community.postgresql import PostgreSQLSink, PostgreSQLSinkError
from streamspark.sinks.community.redis import RedisSink

from .conftest import feed, make_batch


def pg_rows(pg, sql):
    with psycopg2.connect(host="127.0.0.1", port=pg.port, user=pg.user, dbname="postgres") as conn, conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def pg_sink(pg, **kw):
    kw.setdefault("table_name", "events")
    return PostgreSQLSink(host="127.0.0.1", port=pg.port, dbname="postgres", user=pg.user, password="", **kw)


# -- PostgreSQL ---------------------------------------------------------------------------------
def test_postgres_creates_table_adds_columns_and_routes_per_record(postgres):
    sink = pg_sink(postgres, table_name=lambda item: f"pg_{item.value['kind']}")
    sink.start()
    feed(sink, make_batch({"kind": "a", "n": 1, "x": 0.5}, {"kind": "b", "n": 2}))
    sink.flush()
    feed(sink, make_batch({"kind": "a", "n": 3, "tags": ["x"], "ok": True}, start=2))
    sink.flush()
    rows = pg_rows(postgres, 'SELECT "__key", n, x, tags, ok, "timestamp" FROM pg_a ORDER BY n')
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [("k0", 1, 0.5, None, None), ("k0", 3, None, ["x"], True)]
    assert rows[0][5].isoformat() == "2023-11-14T22:13:20"
    types = dict(pg_rows(postgres, "SELECT column_name, data_type FROM information_schema.columns WHERE table_name='pg_a'"))
    assert types == {
        "timestamp": "timestamp without time zone",
        "__key": "text",
        "kind": "text",
        "n": "bigint",
        "x": "double precision",
        "tags": "jsonb",
        "ok": "boolean",
    }
    assert pg_rows(postgres, "SELECT n FROM pg_b") == [(2,)]


def test_postgres_refused_write_fails_and_writes_nothing(postgres):
    sink = pg_sink(postgres, table_name="pg_typed")
    sink.start()
    feed(sink, make_batch({"n": 1}))
    sink.flush()
    feed(sink, make_batch({"n": 2}, {"n": "not a number"}, start=1))
    with pytest.raises(PostgreSQLSinkError, match="invalid input syntax for type bigint"):
        sink.flush()
    assert pg_rows(postgres, "SELECT n FROM pg_typed") == [(1,)]  # the whole flush rolled back
    feed(sink, make_batch({"n": 2}, start=1))
    sink.flush()  # the connection is usable again
    assert pg_rows(postgres, "SELECT n FROM pg_typed ORDER BY n") == [(1,), (2,)]


def test_postgres_without_auto_update_needs_the_table(postgres):
    sink = pg_sink(postgres, table_name="pg_missing", schema_auto_update=False)
    sink.start()
    feed(sink, make_batch({"n": 1}))
    with pytest.raises(PostgreSQLSinkError, match='relation "public.pg_missing" does not exist'):
        sink.flush()


def test_postgres_down_is_a_clear_error(closed_port):
    sink = PostgreSQLSink(
        host="127.0.0.1", port=closed_port, dbname="x", user="u", password="p", table_name="t", connection_timeout_seconds=2
    )
    with pytest.raises(ConnectionError, match=f"PostgreSQL at 127.0.0.1:{closed_port} refused the connection"):
        sink.start()


def test_postgres_kwargs_win_over_the_named_connection_parameters(postgres):
    """``kwargs`` go to ``psycopg2.connect`` and win over what the sink derives (here the
    timeout), as in Quix Streams: no "multiple values" TypeError."""
    sink = pg_sink(postgres, table_name="pg_kwargs", connect_timeout=3)
    sink.start()
    feed(sink, make_batch({"n": 1}))
    sink.flush()
    assert pg_rows(postgres, "SELECT n FROM pg_kwargs") == [(1,)]


def test_postgres_refuses_a_non_dict_value_as_it_arrives(postgres):
    sink = pg_sink(postgres)
    sink.start()
    with pytest.raises(TypeError, match=r'^Sink "PostgreSQLSink" supports only dictionaries, got <class .list.>$'):
        feed(sink, make_batch([1, 2], topic="raw"))
    sink.flush()  # nothing was taken: nothing to write


# -- Redis --------------------------------------------------------------------------------------
def test_redis_sets_keys_and_custom_serializers(redis_server):
    sink = RedisSink(host="127.0.0.1", port=redis_server.port, db=0)
    sink.start()
    feed(sink, make_batch({"a": 1}, {"a": 2}, keys=[b"r1", b"r2"]))
    sink.flush()
    client = redis.Redis(port=redis_server.port)
    assert json.loads(client.get("r1")) == {"a": 1} and json.loads(client.get("r2")) == {"a": 2}
    custom = RedisSink(
        host="127.0.0.1",
        port=redis_server.port,
        db=1,
        value_serializer=lambda v: str(v["a"]),
        key_serializer=lambda k, v: f"user:{k.decode()}",
    )
    custom.start()
    feed(custom, make_batch({"a": 7}, keys=[b"u"]))
    custom.flush()
    assert redis.Redis(port=redis_server.port, db=1).get("user:u") == b"7"


def test_redis_key_must_be_text_and_down_server_is_clear(redis_server, closed_port):
    sink = RedisSink(host="127.0.0.1", port=redis_server.port, db=2)
    sink.start()
    feed(sink, make_batch({"a": 1}, keys=[None]))
    with pytest.raises(TypeError, match="RedisSink needs str or bytes keys, got NoneType"):
        sink.flush()
    assert redis.Redis(port=redis_server.port, db=2).dbsize() == 0
    with pytest.raises(ConnectionError, match="Redis at 127.0.0.1:.* is unreachable"):
        RedisSink(host="127.0.0.1", port=closed_port, db=0, socket_timeout=2).start()


# -- MongoDB (nx-27017 emulator) -----------------------------------------------------------------
def test_mongodb_update_replace_metadata_and_selector_emulator(mongo):
    client = pymongo.MongoClient("127.0.0.1", mongo.port)
    col = client["db"]["docs"]
    sink = MongoDBSink(host="127.0.0.1", port=mongo.port, db="db", collection="docs", add_topic_metadata=True)
    sink.start()
    feed(sink, make_batch({"a": 1, "b": 1}, keys=[b"doc"]))
    sink.flush()
    feed(sink, make_batch({"b": 2}, keys=[b"doc"], start=1))
    sink.flush()
    assert list(col.find()) == [{"_id": "doc", "a": 1, "b": 2, "__topic": "t", "__partition": 0, "__offset": 1}]

    replace = MongoDBSink(
        host="127.0.0.1",
        port=mongo.port,
        db="db",
        collection="docs",
        update_method="ReplaceOne",
        add_message_metadata=True,
        value_selector=lambda d: {k: v for k, v in d.items() if k != "__headers"},
    )
    replace.start()
    feed(replace, make_batch({"c": 3}, keys=[b"doc"]))
    replace.flush()
    assert list(col.find()) == [{"_id": "doc", "c": 3, "__key": "doc", "__timestamp": 1_700_000_000_000}]

    many = MongoDBSink(
        host="127.0.0.1",
        port=mongo.port,
        db="db",
        collection="many",
        update_method="UpdateMany",
        document_matcher=lambda item: {"group": item.value["group"]},
        upsert=False,
    )
    client["db"]["many"].insert_many([{"group": "g", "n": 0}, {"group": "g", "n": 0}, {"group": "h", "n": 0}])
    many.start()
    feed(many, make_batch({"group": "g", "n": 5}))
    many.flush()
    assert sorted(d["n"] for d in client["db"]["many"].find()) == [0, 5, 5]


def test_mongodb_down_is_a_clear_error(closed_port):
    with pytest.raises(ConnectionError, match="MongoDB at 127.0.0.1:.* is unreachable"):
        MongoDBSink(host="127.0.0.1", port=closed_port, db="d", collection="c", authentication_timeout_ms=1000).start()
    with pytest.raises(ValueError, match="update_method"):
        MongoDBSink(host="h", db="d", collection="c", update_method="Upsert")


def test_mongodb_connect_callbacks_are_not_client_options(closed_port):
    failures = []
    MongoDBSink(
        host="127.0.0.1",
        port=closed_port,
        db="d",
        collection="c",
        authentication_timeout_ms=300,
        on_client_connect_failure=failures.append,
    ).start()
    assert len(failures) == 1 and isinstance(failures[0], ConnectionError)  # not a MongoClient option error


# -- Elasticsearch / OpenSearch (osmem emulator) -------------------------------------------------
def search(server, index):
    import urllib.request

    urllib.request.urlopen(urllib.request.Request(f"{server.url}/{index}/_refresh", method="POST")).read()
    with urllib.request.urlopen(f"{server.url}/{index}/_search?size=100") as r:
        return {h["_id"]: h["_source"] for h in json.loads(r.read())["hits"]["hits"]}


def test_elasticsearch_bulk_ids_metadata_and_mapping_emulator(opensearch):
    sink = ElasticsearchSink(
        url=opensearch.url,
        index="docs",
        add_message_metadata=True,
        batch_size=2,
        mapping={"mappings": {"properties": {"n": {"type": "long"}}}},
    )
    sink.start()
    feed(sink, make_batch({"n": 1}, {"n": 2}, {"n": 3}))
    sink.flush()
    feed(sink, make_batch({"n": 10}))  # key k0 again: the document is replaced, not duplicated
    sink.flush()
    docs = search(opensearch, "docs")
    assert {k: v["n"] for k, v in docs.items()} == {"k0": 10, "k1": 2, "k2": 3}
    assert docs["k1"]["__key"] == "k1" and docs["k1"]["__timestamp"] == 1_700_000_000_001
    assert docs["k1"]["__headers"] == {"h": "v"}


def test_elasticsearch_refused_documents_fail_unless_ignored_emulator(opensearch):
    strict = ElasticsearchSink(url=opensearch.url, index="typed", mapping={"mappings": {"properties": {"n": {"type": "long"}}}})
    strict.start()
    feed(strict, make_batch({"n": "not a number"}))
    with pytest.raises(ElasticsearchBulkError, match="1 document\\(s\\) refused by 'typed'"):
        strict.flush()
    lenient = ElasticsearchSink(
        url=opensearch.url, index="typed", ignore_bulk_upload_errors=True, document_id_setter=lambda item: None
    )
    lenient.start()
    feed(lenient, make_batch({"n": "still not"}, {"n": 4}))
    lenient.flush()
    assert [d["n"] for d in search(opensearch, "typed").values()] == [4]


def test_elasticsearch_down_is_a_clear_error(closed_port):
    with pytest.raises(ConnectionError, match="Elasticsearch at http://127.0.0.1:.* is unreachable"):
        ElasticsearchSink(url=f"http://127.0.0.1:{closed_port}", index="x").start()
