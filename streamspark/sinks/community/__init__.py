"""Connectors to external systems. Import each from its module, e.g.
``from streamspark.sinks.community.postgresql import PostgreSQLSink``; client libraries are
optional extras (``pip install "streamspark[postgres]"``) and a missing one fails with the
extra's name when the sink starts.

=====================  ===============================  ==========================
module                 sink                             extra
=====================  ===============================  ==========================
``file``               ``FileSink``                     ``s3`` / ``azure`` (remote)
``postgresql``         ``PostgreSQLSink``               ``postgres``
``redis``              ``RedisSink``                    ``redis``
``elasticsearch``      ``ElasticsearchSink``            (none: HTTP)
``mongodb``            ``MongoDBSink``                  ``mongodb``
``bigquery``           ``BigQuerySink``                 ``bigquery``
``kinesis``            ``KinesisSink``                  ``kinesis``
``pubsub``             ``PubSubSink``                   ``pubsub``
``neo4j``              ``Neo4jSink``                    ``neo4j``
``iceberg``            ``IcebergSink``                  ``iceberg`` / ``iceberg-aws``
``influxdb1``          ``InfluxDB1Sink``                (none: HTTP)
=====================  ===============================  ==========================
"""
