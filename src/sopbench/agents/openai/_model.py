"""What the ``openai`` agent and the ``llm`` user share: their options (one model behind one
endpoint) and the endpoint they build from them."""

from __future__ import annotations

from pydantic import model_validator

from sopbench.agents._options import Options, option

from ._endpoint import ChatEndpoint, check_endpoint
from ._retry import RetryPolicy


class ModelOptions(Options):
    """What the ``openai`` agent and the ``llm`` user share: one model behind one endpoint. Where the
    requests go and how they are retried decide no result (``identity=False``)."""

    model: str = option(help="Model name.")
    base_url: str | list[str] | None = option(
        None,
        help="OpenAI-compatible endpoint (several: replicas of one model).",
        identity=False,
        redact="url",
    )
    api_key_env: str | None = option(None, help="Variable holding the API key.", identity=False)
    temperature: float | None = option(0.0, help="Sampling temperature (None: send none).")
    max_tokens: int | None = option(512, help="Completion token limit per reply (None: send none).")
    request_timeout: float = option(300.0, help="Seconds per request.", identity=False)
    max_retries: int = option(5, help="Retries per request.", identity=False)
    retry_initial_backoff: float = option(1.0, help="Seconds before the first retry.", identity=False)
    retry_max_backoff: float = option(60.0, help="Longest wait between retries.", identity=False)
    endpoint_slots: int | None = option(None, help="Requests in flight at once per URL.", identity=False)

    @model_validator(mode="after")
    def _endpoint(self) -> ModelOptions:
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        check_endpoint(
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            request_timeout=self.request_timeout,
            slots=self.endpoint_slots,
        )
        return self


class ModelSide:
    """What the ``openai`` agent and the ``llm`` user share: one model behind one endpoint, with its
    sampling settings, from their validated options (``self._use_model(options)``)."""

    model: str
    temperature: float | None
    max_tokens: int | None
    endpoint: ChatEndpoint

    def _use_model(self, options: ModelOptions) -> None:
        self.model = options.model
        self.temperature = options.temperature
        self.max_tokens = options.max_tokens
        self.endpoint = ChatEndpoint(
            base_url=options.base_url,
            model=options.model,
            api_key_env=options.api_key_env,
            request_timeout=options.request_timeout,
            retry=RetryPolicy(options.max_retries, options.retry_initial_backoff, options.retry_max_backoff),
            slots=options.endpoint_slots,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, url={self.endpoint.where!r})"

    async def close(self) -> None:
        await self.endpoint.close()
