"""The FastAPI adapter: app factory, dependencies, routes and error mapping."""

from dynamic_tools.api.app import create_app

__all__ = ["create_app"]
