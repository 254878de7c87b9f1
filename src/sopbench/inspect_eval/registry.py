"""What Inspect loads through the ``inspect_ai`` entry point: the ``sopbench`` task."""

from ._task import sopbench

__all__ = ["sopbench"]
