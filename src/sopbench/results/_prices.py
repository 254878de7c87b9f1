"""``--prices FILE``: USD per million input and output tokens, per model name (TOML or JSON).

[gpt-4o-mini]            {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}
input = 0.15
output = 0.60
"""

from __future__ import annotations

from pathlib import Path

from sopbench._json import MAX_VALUE_BYTES, decode_document, decode_toml_bounded


def read_prices(path: Path) -> dict[str, tuple[float, float]]:
    """``{model: (USD per million input tokens, USD per million output tokens)}``; a malformed file
    is a ``ValueError`` naming the entry (never a partly read table)."""
    text = path.read_bytes()
    try:
        if path.suffix.lower() == ".json":
            data = decode_document(text, size=MAX_VALUE_BYTES)
        else:
            data = decode_toml_bounded(text.decode())
    except (ValueError, UnicodeDecodeError) as exc:  # not JSON/TOML, or past the bound
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise ValueError(f"not valid {kind} ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise ValueError("expected a table of models, each with input and output prices")
    prices: dict[str, tuple[float, float]] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ValueError(f"{model}: expected exactly input and output (USD per million tokens)")
        values = entry["input"], entry["output"]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in values):
            raise ValueError(f"{model}: prices must be non-negative numbers")
        prices[str(model)] = (float(values[0]), float(values[1]))
    return prices
