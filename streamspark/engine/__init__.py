"""The Spark engine: one Structured Streaming query per application run.

Internal: users go through ``Application``. Importing this package imports PySpark.
"""
