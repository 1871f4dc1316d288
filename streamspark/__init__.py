"""streamspark: the Quix Streams programming model on Apache Spark Structured Streaming.

>>> from streamspark import Application
>>> app = Application(broker_address="127.0.0.1:9092", consumer_group="demo")  # doctest: +SKIP
>>> sdf = app.dataframe(app.topic("readings"))  # doctest: +SKIP
>>> sdf = sdf[sdf["temp"] > 30]  # doctest: +SKIP
>>> app.run()  # doctest: +SKIP
"""

from .app import Application, ApplicationConfig
from .context import message_context
from .dataframe import StreamingDataFrame, StreamingSeries
from .kafka.configuration import ConnectionConfig
from .logging import configure_logging
from .models import MessageContext, Topic, TopicConfig
from .models.serializers import IgnoreMessage
from .sinks import SinkBackpressureError

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
    "message_context",
    "configure_logging",
    "__version__",
)
