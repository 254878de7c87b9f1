"""The one place the generator reaches into the scoring package: its check of arguments against a schema."""

# adapter: the lead switches this to the public API at merge

from __future__ import annotations

from sopbench.scoring._engine import _type_problem as argument_problem

__all__ = ["argument_problem"]
