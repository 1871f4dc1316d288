"""Topic creation settings."""

from __future__ import annotations

import dataclasses
from typing import Optional

__all__ = ("TopicConfig",)


@dataclasses.dataclass(frozen=True, eq=True)
class TopicConfig:
    """Partitions, replication and extra broker settings of a topic (frozen).

    >>> TopicConfig(num_partitions=4, replication_factor=1).num_partitions
    4
    """

    num_partitions: int
    replication_factor: int
    extra_config: dict[str, str] = dataclasses.field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.num_partitions, self.replication_factor, tuple(sorted(self.extra_config.items()))))

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def default_topic_config(num_partitions: Optional[int] = None, replication_factor: Optional[int] = None) -> TopicConfig:
    return TopicConfig(num_partitions=num_partitions or 1, replication_factor=replication_factor or 1)
