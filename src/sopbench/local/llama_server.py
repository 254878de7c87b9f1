"""``python -m sopbench.local.llama_server``: llama-cpp-python's OpenAI-compatible server with
sopbench's chat format (``--chat_format sopbench-tools``) registered; it takes the options of
``python -m llama_cpp.server``. ``serve-local`` runs it.

``python -m sopbench.local.llama_server --check GGUF`` loads the model and generates two tokens,
then exits 0: ``serve-local`` runs it first, in a process of its own, so that a llama.cpp build
whose CPU code does not run here (SIGILL) is named with its fix instead of killing the server.
Needs the extra ``local-llm``.
"""

from __future__ import annotations

import sys
from typing import Any

from ._handler import CHAT_FORMAT, ChatHandler

CHECK_FLAG = "--check"


def register() -> None:
    """Register sopbench's chat handler with llama-cpp-python, under ``CHAT_FORMAT``."""
    from llama_cpp.llama_chat_format import LlamaChatCompletionHandlerRegistry

    # ChatHandler takes the request's fields as plain mappings (it is tested without llama.cpp),
    # not as the TypedDicts llama-cpp-python's handler protocol spells out.
    handler: Any = ChatHandler()
    LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        CHAT_FORMAT, handler, overwrite=True
    )


def check(gguf: str) -> None:
    """Load ``gguf`` with llama.cpp and answer a two-token chat request through sopbench's chat
    format (what crashes a build for another CPU, and what a llama-cpp-python it cannot work with
    fails on)."""
    from llama_cpp import Llama

    register()
    model = Llama(model_path=gguf, n_ctx=512, n_threads=1, n_batch=64, chat_format=CHAT_FORMAT, verbose=False)
    model.create_chat_completion([{"role": "user", "content": "Hello"}], max_tokens=2, temperature=0.0)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == [CHECK_FLAG] and len(args) == 2:
        check(args[1])
        return
    register()
    from llama_cpp.server.__main__ import main as serve

    sys.argv = [sys.argv[0], *args]
    serve()


if __name__ == "__main__":
    main()
