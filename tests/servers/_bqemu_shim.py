"""Runs ``bqemulator`` on the DuckDB 1.4 it is installed with in ``.tools/bqemu``.

bqemulator needs DuckDB's spatial extension, which it downloads at start-up (not reachable
here); the PyPI package ``duckdb-ext-spatial`` carries it only for DuckDB 1.4.4. That DuckDB's
``create_function`` wants enums and type objects where bqemulator passes strings, so this
adapts those arguments before starting the emulator's CLI. Test infrastructure only: it runs
in the emulator's own virtual environment, never in the library.
"""

import sys

import duckdb
from _duckdb import _func  # type: ignore[import-not-found]

_create_function = duckdb.DuckDBPyConnection.create_function


def _as_type(value):  # type: ignore[no-untyped-def]
    return duckdb.type(value) if isinstance(value, str) else value


def create_function(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    args = list(args)
    if len(args) > 2 and isinstance(args[2], (list, tuple)):
        args[2] = [_as_type(t) for t in args[2]]
    if len(args) > 3:
        args[3] = _as_type(args[3])
    if isinstance(kwargs.get("parameters"), (list, tuple)):
        kwargs["parameters"] = [_as_type(t) for t in kwargs["parameters"]]
    if "return_type" in kwargs:
        kwargs["return_type"] = _as_type(kwargs["return_type"])
    if isinstance(kwargs.get("null_handling"), str):
        kwargs["null_handling"] = getattr(_func.FunctionNullHandling, kwargs["null_handling"].upper())
    if isinstance(kwargs.get("type"), str):
        kwargs["type"] = getattr(_func.PythonUDFType, kwargs["type"].upper())
    return _create_function(self, *args, **kwargs)


duckdb.DuckDBPyConnection.create_function = create_function  # type: ignore[method-assign]

if __name__ == "__main__":
    from bqemulator.cli import main

    sys.exit(main())
