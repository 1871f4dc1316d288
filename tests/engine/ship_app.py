"""An application whose streamspark comes from a wheel shipped with ``--py-files`` (run by
spark-submit with a Python that does not have streamspark installed): each output says where
the Spark worker that made it imported streamspark from; the program prints, as JSON, where it
imported it from itself and the outputs.

    spark-submit --py-files streamspark-*.whl ship_app.py BROKER SOURCE_TOPIC WORK_DIR
"""

from __future__ import annotations

import json
import sys

import streamspark
from streamspark import Application


def where(value: dict) -> dict:
    import streamspark

    return {**value, "imported_from": streamspark.__file__}


def main() -> None:
    address, src, work = sys.argv[1:4]
    app = Application(broker_address=address, consumer_group="shipped", auto_offset_reset="earliest", state_dir=f"{work}/state")
    app.dataframe(app.topic(src)).apply(where)
    outputs = app.run(count=3, timeout=60)
    print(json.dumps({"driver": streamspark.__file__, "outputs": outputs}))


if __name__ == "__main__":
    main()
