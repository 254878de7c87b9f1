"""What Inspect loads through the ``inspect_ai`` entry point: the ``sopbench`` task, and the
``sopbench-reference`` model (the reference agent's decisions, for offline checks)."""

from ._reference_model import reference_model
from ._task import sopbench

__all__ = ["reference_model", "sopbench"]
