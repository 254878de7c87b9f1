"""sopbench: measure whether tool-using LLM agents follow standard operating procedures."""

__version__ = "0.1.0"
