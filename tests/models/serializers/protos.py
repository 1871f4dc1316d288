"""A Protobuf message class for the tests, built at import time from a FileDescriptorProto (no
protoc). Importable by module path, so instances and serializers holding it pickle for Spark.

    message Reading { string sensor_id = 1; double value = 2; Kind kind = 3; }
    enum Kind { KIND_UNKNOWN = 0; KIND_TEMPERATURE = 1; }
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ("Reading",)

_F = descriptor_pb2.FieldDescriptorProto


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(
        name="streamspark_tests/reading.proto", package="streamspark.tests", syntax="proto3"
    )
    kind = proto.enum_type.add(name="Kind")
    kind.value.add(name="KIND_UNKNOWN", number=0)
    kind.value.add(name="KIND_TEMPERATURE", number=1)
    reading = proto.message_type.add(name="Reading")
    reading.field.add(name="sensor_id", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    reading.field.add(name="value", number=2, type=_F.TYPE_DOUBLE, label=_F.LABEL_OPTIONAL)
    reading.field.add(name="kind", number=3, type=_F.TYPE_ENUM, type_name=".streamspark.tests.Kind", label=_F.LABEL_OPTIONAL)
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())
Reading = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("streamspark.tests.Reading"))
Reading.__module__ = __name__
