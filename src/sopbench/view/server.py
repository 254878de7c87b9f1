"""The viewer's web server (needs the optional extra ``view``: starlette and uvicorn).

Kept apart from ``sopbench.view`` so that the report can use the templates and drawings without a
web server installed.
"""

from ._app import PAGE_SIZE, create_app, episode_json
from ._serve import LOCAL_HOST, bind, is_loopback, serve, url_of

__all__ = ["LOCAL_HOST", "PAGE_SIZE", "bind", "create_app", "episode_json", "is_loopback", "serve", "url_of"]
