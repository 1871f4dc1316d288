"""Sources maintained with streamspark itself (``CSVSource``, ``KafkaReplicatorSource``)."""
