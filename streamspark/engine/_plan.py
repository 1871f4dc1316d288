"""What the driver ships to Spark tasks: the topics, the plan trees and the callbacks."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from ..core.stream import StreamNode
from ..models.topics.topic import Topic

__all__ = ("PipelinePlan",)


@dataclasses.dataclass
class PipelinePlan:
    """A picklable description of one application's pipeline."""

    run_id: str
    topics: dict[str, Topic]
    roots: dict[str, StreamNode]
    producer_config: dict[str, Any]
    on_consumer_error: Callable[..., bool]
    on_processing_error: Callable[..., bool]
    on_producer_error: Callable[..., bool]
    on_message_processed: Optional[Callable[[str, int, int], None]] = None
    collect: bool = False
    metadata: bool = False
    loglevel: Any = "INFO"

    @property
    def stateful(self) -> bool:
        """True when a step needs per-key state (the pipeline then runs per key bucket)."""
        return any(node.options.get("stream_id") for node in self._nodes())

    def _nodes(self) -> list[StreamNode]:
        found = []
        stack = list(self.roots.values())
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(node.children)
        return found

    def sink_nodes(self) -> list[StreamNode]:
        found = []
        for root in self.roots.values():
            stack = [root]
            while stack:
                node = stack.pop()
                if node.kind == "sink":
                    found.append(node)
                stack.extend(node.children)
        return found
