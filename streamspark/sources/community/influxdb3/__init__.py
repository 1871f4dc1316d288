"""InfluxDB 3 source: measurements queried window by window, their points produced to a topic.

>>> from streamspark.sources.community.influxdb3 import InfluxDB3Source
"""

from .influxdb3 import InfluxDB3Source, NoMeasurementsFound

__all__ = ("InfluxDB3Source", "NoMeasurementsFound")
