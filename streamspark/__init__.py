"""streamspark: the Quix Streams programming model on Apache Spark Structured Streaming.

>>> from streamspark import Application
>>> app = Application(broker_address="127.0.0.1:9092", consumer_group="demo")  # doctest: +SKIP
>>> sdf = app.dataframe(app.topic("readings"))  # doctest: +SKIP
>>> sdf = sdf[sdf["temp"] > 30]  # doctest: +SKIP
>>> app.run()  # doctest: +SKIP
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import Application, ApplicationConfig
    from .context import message_context
    from .dataframe import StreamingDataFrame, StreamingSeries
    from .kafka.configuration import ConnectionConfig
    from .logging import configure_logging
    from .models import MessageContext, Topic, TopicConfig
    from .models.serializers import IgnoreMessage
    from .sinks import SinkBackpressureError
    from .state import State

#: public name -> the module that defines it. Imported on first use: Spark's Python processes
#: import this package to run a pipeline's steps and need none of the application layer
#: (pydantic-settings and the app module cost ~0.25 s in each of them).
_LAZY = {
    "Application": ".app",
    "ApplicationConfig": ".app",
    "message_context": ".context",
    "StreamingDataFrame": ".dataframe",
    "StreamingSeries": ".dataframe",
    "ConnectionConfig": ".kafka.configuration",
    "configure_logging": ".logging",
    "MessageContext": ".models",
    "Topic": ".models",
    "TopicConfig": ".models",
    "IgnoreMessage": ".models.serializers",
    "SinkBackpressureError": ".sinks",
    "State": ".state",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'streamspark' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__version__ = "0.1.0"

__all__ = (
    "Application",
    "ApplicationConfig",
    "ConnectionConfig",
    "MessageContext",
    "StreamingDataFrame",
    "StreamingSeries",
    "Topic",
    "TopicConfig",
    "IgnoreMessage",
    "SinkBackpressureError",
    "State",
    "message_context",
    "configure_logging",
    "__version__",
)
