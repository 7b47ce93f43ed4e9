import json

from loguru import logger

from dynamic_tools.logs import configure_logging
from dynamic_tools.redaction import redactor
from dynamic_tools.settings import Settings


def test_known_secrets_are_masked_in_messages_extras_and_exceptions() -> None:
    lines: list[str] = []
    settings = Settings(
        _env_file=None,
        openai_api_key="sk-settings-secret-123",  # type: ignore[call-arg]
        log_json=True,
    )
    configure_logging(settings, sink=lines.append)
    secret = "tool-secret-" + "999"  # built at run time: the traceback shows source lines
    redactor.add(secret)
    logger.bind(url="https://x.example/?key=tool-secret-999").info(
        "calling with sk-settings-secret-123"
    )
    try:
        raise ValueError(f"bad key {secret}")
    except ValueError:
        logger.exception("failed")
    text = "".join(lines)
    assert "tool-secret-999" not in text and "sk-settings-secret-123" not in text
    first = json.loads(lines[0])
    assert first["message"] == "calling with ***" and first["level"] == "INFO"
    assert first["url"] == "https://x.example/?key=***"
    assert json.loads(lines[1])["exception"] == "ValueError: bad key ***"
