"""``SQLiteLookup`` and its fields: results through ``sdf.test()``, caching and TTL, errors, pickling."""

from __future__ import annotations

import pickle
import sqlite3
import time

import pytest

from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.joins.lookups import (
    SQLiteLookup,
    SQLiteLookupError,
    SQLiteLookupField,
    SQLiteLookupQueryField,
)
from streamspark.models import Topic

from .conftest import make_devices_db


def enrich(lookup, fields, value, key=b"key", on="device"):
    sdf = StreamingDataFrame(Topic("readings")).join_lookup(lookup, fields, on=on)
    [(out, *_)] = sdf.test(value, key=key)
    return out


@pytest.mark.parametrize(
    "field, device, expected",
    [
        pytest.param(
            SQLiteLookupField(table="devices", columns=["model", "site"], on="id"),
            "d2",
            {"model": "m2", "site": "s2"},
            id="first row as a dict",
        ),
        pytest.param(
            SQLiteLookupField(table="devices", columns=["model"], on="id", order_by="since"),
            "d1",
            {"model": "m1-old"},
            id="order_by ASC",
        ),
        pytest.param(
            SQLiteLookupField(table="devices", columns=["model"], on="id", order_by="since", order_by_direction="DESC"),
            "d1",
            {"model": "m1"},
            id="order_by DESC",
        ),
        pytest.param(SQLiteLookupField(table="devices", columns=["model"], on="id"), "nope", None, id="no row: default None"),
        pytest.param(
            SQLiteLookupField(table="devices", columns=["model"], on="id", default={"model": "?"}),
            "nope",
            {"model": "?"},
            id="no row: given default",
        ),
        pytest.param(
            SQLiteLookupField(table="devices", columns=["model", "since"], on="id", order_by="since", first_match_only=False),
            "d1",
            [{"model": "m1-old", "since": 0}, {"model": "m1", "since": 1}],
            id="all rows as dicts",
        ),
        pytest.param(
            SQLiteLookupField(table="devices", columns=["model"], on="id", first_match_only=False),
            "nope",
            [],
            id="all rows: none",
        ),
        pytest.param(
            SQLiteLookupQueryField("SELECT model, site FROM devices WHERE id = :device"),
            "d2",
            ("m2", "s2"),
            id="query: first row as a tuple",
        ),
        pytest.param(
            SQLiteLookupQueryField("SELECT since FROM devices WHERE id = :device ORDER BY since", first_match_only=False),
            "d1",
            [(0,), (1,)],
            id="query: all rows",
        ),
        pytest.param(
            SQLiteLookupQueryField("SELECT model FROM devices WHERE id = :device", default="none"),
            "x",
            "none",
            id="query: default",
        ),
    ],
)
def test_field_results(devices_db, field, device, expected):
    assert enrich(SQLiteLookup(devices_db), {"f": field}, {"device": device}) == {"device": device, "f": expected}


def test_the_message_key_as_target_key(devices_db):
    fields = {"model": SQLiteLookupField(table="devices", columns=["model"], on="id")}
    assert enrich(SQLiteLookup(devices_db), fields, {}, key="d2", on=None) == {"model": {"model": "m2"}}


def test_results_are_cached_per_field_and_target_key_until_their_ttl(tmp_path):
    path = make_devices_db(tmp_path / "db")
    lookup = SQLiteLookup(path)
    fields = {
        "long": SQLiteLookupField(table="devices", columns=["model"], on="id", order_by="since", ttl=60),
        "short": SQLiteLookupField(table="devices", columns=["model"], on="id", order_by="since", ttl=0.05),
        "never": SQLiteLookupField(table="devices", columns=["model"], on="id", order_by="since", ttl=0),
    }
    assert enrich(lookup, fields, {"device": "d2"}) == {"device": "d2", **{f: {"model": "m2"} for f in fields}}
    assert lookup.cache_info() == {"hits": 0, "misses": 2, "size": 2, "maxsize": 1000}
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE devices SET model = 'm2-new' WHERE id = 'd2'")
    time.sleep(0.1)
    assert enrich(lookup, fields, {"device": "d2"}) == {
        "device": "d2",
        "long": {"model": "m2"},
        "short": {"model": "m2-new"},
        "never": {"model": "m2-new"},
    }
    assert lookup.cache_info() == {"hits": 1, "misses": 3, "size": 2, "maxsize": 1000}


def test_a_query_field_is_cached_by_target_key_not_by_its_parameters(devices_db):
    """(!) The query's parameters come from the value, but the cache key is ``on``."""
    lookup = SQLiteLookup(devices_db)
    fields = {"model": SQLiteLookupQueryField("SELECT model FROM devices WHERE id = :device")}
    first = enrich(lookup, fields, {"device": "d2", "group": "g"}, on="group")
    second = enrich(lookup, fields, {"device": "d1", "group": "g"}, on="group")
    assert first["model"] == second["model"] == ("m2",)


def test_the_cache_keeps_the_most_recently_used_entries(devices_db):
    lookup = SQLiteLookup(devices_db, cache_size=2)
    fields = {"model": SQLiteLookupField(table="devices", columns=["model"], on="id")}
    for device in ("d1", "d2", "d1", "x"):  # x evicts d2, the least recently used
        enrich(lookup, fields, {"device": device})
    assert lookup.cache_info() == {"hits": 1, "misses": 3, "size": 2, "maxsize": 2}
    enrich(lookup, fields, {"device": "d1"})
    enrich(lookup, fields, {"device": "d2"})
    assert lookup.cache_info() == {"hits": 2, "misses": 4, "size": 2, "maxsize": 2}


def test_mutating_an_enriched_value_does_not_change_the_cache(devices_db):
    lookup = SQLiteLookup(devices_db)
    fields = {"rows": SQLiteLookupField(table="devices", columns=["model"], on="id", first_match_only=False)}
    sdf = StreamingDataFrame(Topic("t")).join_lookup(lookup, fields, on="device")
    sdf.update(lambda v: v["rows"][0].update(model="changed"))
    assert sdf.test({"device": "d2"})[0][0]["rows"] == [{"model": "changed"}]
    assert sdf.test({"device": "d2"})[0][0]["rows"] == [{"model": "changed"}]
    assert lookup.cache_info()["hits"] == 1
    assert enrich(lookup, fields, {"device": "d2"})["rows"] == [{"model": "m2"}]


def test_a_missing_database_fails_at_construction_as_in_quix_streams(tmp_path):
    path = tmp_path / "devices.db"
    with pytest.raises(SQLiteLookupError, match=rf"SQLiteLookup\(path='{path}'\) cannot open its database") as info:
        SQLiteLookup(str(path))
    assert isinstance(info.value, sqlite3.OperationalError)


def test_a_database_gone_after_construction_raises_an_error_naming_the_lookup(tmp_path):
    path = tmp_path / "devices.db"
    make_devices_db(path)
    lookup = SQLiteLookup(str(path))
    path.unlink()
    fields = {"model": SQLiteLookupField(table="devices", columns=["model"], on="id")}
    with pytest.raises(SQLiteLookupError, match=rf"SQLiteLookup\(path='{path}'\) cannot open its database") as info:
        enrich(lookup, fields, {"device": "d1"})
    assert isinstance(info.value, sqlite3.OperationalError)
    # a failure is not remembered: once the file is there again, the lookup works
    make_devices_db(path)
    assert enrich(lookup, fields, {"device": "d1"}) == {"device": "d1", "model": {"model": "m1"}}


def test_a_locked_database_raises_an_error_naming_the_lookup_and_field(devices_db):
    writer = sqlite3.connect(devices_db, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        lookup = SQLiteLookup(devices_db, timeout=0.05)
        fields = {"model": SQLiteLookupField(table="devices", columns=["model"], on="id")}
        with pytest.raises(SQLiteLookupError, match=r"SQLiteLookup\(path=.*\), field 'model': database is locked"):
            enrich(lookup, fields, {"device": "d1"})
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert enrich(lookup, fields, {"device": "d1"})["model"] == {"model": "m1"}


@pytest.mark.parametrize(
    "make_file, field, error",
    [
        pytest.param(
            make_devices_db,
            SQLiteLookupField(table="sites", columns=["name"], on="id"),
            r"field 'f': no such table: sites",
            id="no such table",
        ),
        pytest.param(
            lambda p: p.write_bytes(b"not a database" * 100) and str(p),
            SQLiteLookupField(table="devices", columns=["model"], on="id"),
            r"field 'f': file is not a database",
            id="not a database",
        ),
    ],
)
def test_database_errors_name_the_lookup_and_field(tmp_path, make_file, field, error):
    path = tmp_path / "x.db"
    make_file(path)
    with pytest.raises(SQLiteLookupError, match=error):
        enrich(SQLiteLookup(str(path)), {"f": field}, {"device": "d1"})


def test_other_sqlite_errors_keep_their_type_with_a_note_naming_the_lookup(devices_db):
    fields = {"f": SQLiteLookupQueryField("SELECT model FROM devices WHERE id = :missing_param")}
    with pytest.raises(sqlite3.ProgrammingError) as info:
        enrich(SQLiteLookup(devices_db), fields, {"device": "d1"})
    assert any("SQLiteLookup(path=" in note and "field 'f'" in note for note in info.value.__notes__)


def test_the_error_survives_pickling(tmp_path):
    """Errors of Spark workers travel to the driver pickled."""
    error = SQLiteLookupError("SQLiteLookup(path='x') cannot open its database")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is SQLiteLookupError and str(copy) == str(error)


def test_a_pickled_lookup_opens_its_own_connection_and_copies_share_one_cache(devices_db):
    lookup = SQLiteLookup(devices_db)
    fields = {"model": SQLiteLookupField(table="devices", columns=["model"], on="id")}
    enrich(lookup, fields, {"device": "d1"})  # the original has an open connection now
    blob = pickle.dumps(lookup)
    first, second = pickle.loads(blob), pickle.loads(blob)
    assert repr(first) == repr(lookup)
    assert enrich(first, fields, {"device": "d2"}) == {"device": "d2", "model": {"model": "m2"}}
    assert enrich(second, fields, {"device": "d2"}) == {"device": "d2", "model": {"model": "m2"}}
    assert second.cache_info() == {"hits": 1, "misses": 1, "size": 1, "maxsize": 1000}
    assert lookup.cache_info() == {"hits": 0, "misses": 1, "size": 1, "maxsize": 1000}


def test_a_relative_path_is_taken_from_where_the_lookup_was_made(tmp_path, monkeypatch):
    make_devices_db(tmp_path / "devices.db")
    monkeypatch.chdir(tmp_path)
    lookup = pickle.loads(pickle.dumps(SQLiteLookup("devices.db")))
    monkeypatch.chdir("/")
    fields = {"model": SQLiteLookupField(table="devices", columns=["model"], on="id")}
    assert enrich(lookup, fields, {"device": "d1"})["model"] == {"model": "m1"}


def test_fields_of_other_lookups_are_refused(devices_db):
    from streamspark.dataframe.joins.lookups import BaseField

    class Other(BaseField):
        pass

    with pytest.raises(TypeError, match="takes SQLite lookup fields; field 'f' is a Other"):
        enrich(SQLiteLookup(devices_db), {"f": Other()}, {"device": "d1"})


@pytest.mark.parametrize(
    "make, error",
    [
        pytest.param(lambda: SQLiteLookupField(table="devices", columns=["*"], on="id"), "'\\*' in columns"),
        pytest.param(lambda: SQLiteLookupField(table="devices; DROP", columns=["a"], on="id"), "for table"),
        pytest.param(lambda: SQLiteLookupField(table="devices", columns=["a b"], on="id"), "for a column"),
        pytest.param(lambda: SQLiteLookupField(table="devices", columns=["a"], on="id--"), "for on"),
        pytest.param(lambda: SQLiteLookupField(table="devices", columns=["a"], on="id", order_by="x y"), "order_by"),
        pytest.param(
            lambda: SQLiteLookupField(table="devices", columns=["a"], on="id", order_by="a", order_by_direction="UP"),
            "order_by_direction",
        ),
        pytest.param(lambda: SQLiteLookupField(table="devices", columns=[], on="id"), "at least one column"),
        pytest.param(lambda: SQLiteLookupQueryField(" "), "non-empty SQL"),
        pytest.param(lambda: SQLiteLookup("x.db", cache_size=-1), "cache_size"),
    ],
)
def test_bad_definitions_are_refused(make, error):
    with pytest.raises(ValueError, match=error):
        make()


def test_columns_as_a_string_is_refused():
    with pytest.raises(TypeError, match="columns must be a list"):
        SQLiteLookupField(table="devices", columns="model", on="id")  # type: ignore[arg-type]


def test_identifiers_go_into_the_query_and_the_target_key_is_a_parameter():
    field = SQLiteLookupField(
        table="devices", columns=["model", "site"], on="id", order_by="since", order_by_direction="DESC", first_match_only=False
    )
    assert field.build_query("x' OR 1=1", {}) == (
        "SELECT model, site FROM devices WHERE id = ? ORDER BY since DESC",
        ("x' OR 1=1",),
    )
