"""A ``join_lookup`` pipeline on the broker and Spark: the lookup is pickled to the workers and
opens its database there; a lookup error goes through ``on_processing_error``."""

from __future__ import annotations

import json

from streamspark.dataframe.joins.lookups import SQLiteLookup, SQLiteLookupError, SQLiteLookupField, SQLiteLookupQueryField

from ....conftest import json_messages
from .conftest import make_devices_db


def test_sqlite_lookup_end_to_end(make_app, kafka, tmp_path):
    db = make_devices_db(tmp_path / "devices.db")
    src, out = kafka.new_topic(), kafka.new_topic()
    # audited records come first: by the last output every record was processed
    records = [
        {"n": 0, "audit": True},
        {"n": 1, "audit": False},
        {"n": 2, "audit": True},
        {"n": 3, "audit": False},
        {"n": 4, "audit": False},
    ]
    devices = ["d1", "d2", "d1", "d2", "ghost"]
    for record, device in zip(records, devices):
        record["device"] = device
    kafka.produce(src, json_messages(records, key=lambda v: v["device"].encode()))

    skipped: list[tuple[str, str]] = []

    def on_processing_error(exc, row, logger):
        if isinstance(exc, SQLiteLookupError):
            skipped.append((type(exc).__name__, str(exc)))
            return True
        return False

    app = make_app(on_processing_error=on_processing_error)
    sdf = app.dataframe(app.topic(src, key_deserializer="str"))
    sdf = sdf.join_lookup(
        SQLiteLookup(db),
        {
            "device_info": SQLiteLookupField(
                table="devices",
                columns=["model", "site"],
                on="id",
                order_by="since",
                order_by_direction="DESC",
                default={"model": None},
            ),
            "since": SQLiteLookupQueryField(
                "SELECT since FROM devices WHERE id = :device ORDER BY since", first_match_only=False
            ),
        },
    )
    audited = sdf[sdf["audit"]]
    # a database there when the lookup is built, gone when the workers open it
    gone = make_devices_db(tmp_path / "missing.db")
    audited.join_lookup(SQLiteLookup(gone), {"x": SQLiteLookupField(table="audit", columns=["x"], on="id")}, on="device")
    (tmp_path / "missing.db").unlink()
    sdf.to_topic(app.topic(out))
    rows = app.run(count=3, timeout=60)

    expected = [
        {"n": 1, "audit": False, "device": "d2", "device_info": {"model": "m2", "site": "s2"}, "since": [(5,)]},
        {"n": 3, "audit": False, "device": "d2", "device_info": {"model": "m2", "site": "s2"}, "since": [(5,)]},
        {"n": 4, "audit": False, "device": "ghost", "device_info": {"model": None}, "since": []},
    ]
    assert sorted(rows, key=lambda v: v["n"]) == expected  # query rows are tuples, as in sdf.test()
    as_json = json.loads(json.dumps(expected))
    assert [json.loads(m.value()) for m in kafka.consume(out, expected=3)] == as_json
    missing = str(tmp_path / "missing.db")
    message = f"SQLiteLookup(path={missing!r}) cannot open its database {missing!r}: unable to open database file"
    assert skipped == [("SQLiteLookupError", message)] * 2
