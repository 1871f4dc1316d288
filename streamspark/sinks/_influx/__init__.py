"""Shared InfluxDB support: records to line protocol, and the HTTP write with backpressure."""
